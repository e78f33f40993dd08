"""`burn_nn.generation`: sampling and the generation loop (`Sampler`, `generate`)."""

from ._generation import Sampler, generate

__all__ = ["Sampler", "generate"]
