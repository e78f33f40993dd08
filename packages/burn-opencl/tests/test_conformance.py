"""The backend conformance suite (burn-backend-tests), run on OpenCl (f32/i32 and f64/i64)."""

from burn_backend_tests.conformance import *
