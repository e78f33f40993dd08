"""The guide model and the text-classification transformer quantized after training: accuracy,
record size and CPU time, f32 vs int8 / int4 weights (and int8 weights with int8 activations)."""

from .guide_task import evaluate, guide_task, quantize_and_compare, train_quick
from .run import SCHEMES, Report, Task, compare, record_bytes
from .text_task import quantize_and_compare_text, text_task, train_text

__all__ = [
    "SCHEMES",
    "Report",
    "Task",
    "compare",
    "evaluate",
    "guide_task",
    "quantize_and_compare",
    "quantize_and_compare_text",
    "record_bytes",
    "text_task",
    "train_quick",
    "train_text",
]
