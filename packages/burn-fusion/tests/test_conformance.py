"""The backend conformance suite of burn_tensor, run on Fusion(OpenCl) (f32/i32 and f64/i64):
every op must behave exactly as on the backend Fusion wraps, whether it fused or not."""

from burn_tensor.testing.conformance import *
