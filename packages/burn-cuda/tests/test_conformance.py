"""The backend conformance suite of burn_tensor, run on Cuda (f32/i32 and f64/i64)."""

from burn_backend_tests.conformance import *
