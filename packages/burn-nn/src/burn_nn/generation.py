"""`burn_nn.generation`: sampling and the generation loops (`Sampler`, `generate`, and
`generate_static` over a static cache, its decode step captured on Fusion)."""

from ._generation import Sampler, generate
from ._generation_static import can_capture, generate_static

__all__ = ["Sampler", "can_capture", "generate", "generate_static"]
