"""The guide model quantized after training: accuracy, record size and CPU time, f32 vs int8/int4."""

from .run import Report, evaluate, quantize_and_compare, train_quick

__all__ = ["Report", "evaluate", "quantize_and_compare", "train_quick"]
