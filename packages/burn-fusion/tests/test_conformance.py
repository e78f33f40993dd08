"""The backend conformance suite (burn-backend-tests), run on Fusion(OpenCl) (f32/i32 and f64/i64):
every op must behave exactly as on the backend Fusion wraps, whether it fused or not."""

from burn_backend_tests.conformance import *
