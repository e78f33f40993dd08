"""Burn's named-tensor example: tensors whose dims carry names, checked by every op."""

from .run import Batch, DModel, SeqLength, run

__all__ = ["Batch", "DModel", "SeqLength", "run"]
