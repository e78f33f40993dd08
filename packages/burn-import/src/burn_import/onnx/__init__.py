"""burn_import.onnx: ONNX models into readable burn-py code plus a weights record.

Burn's `burn_import::onnx`. `ModelGen` reads an ONNX file (opsets older than 13 are upgraded with
`onnx.version_converter`), writes a Python module with a `Module` subclass whose `forward` follows
the graph (ONNX names in comments), and a record with the weights. `backend` is ONNX's backend
API on top of it, so ONNX's own test suite measures the importer.

Example:
    >>> from burn_import.onnx import ModelGen, RecordType
    >>> gen = ModelGen().input("mnist.onnx").out_dir("model/").record_type(RecordType.NamedMpk)
    >>> # gen.run() writes model/mnist.py and model/mnist.mpk
"""

from ._codegen import generate
from ._errors import OnnxImportError
from ._load import load_model
from ._modelgen import ModelGen, RecordType
from ._registry import load_all as _load_all


def supported_ops() -> dict[str, tuple[int, int, list[str]]]:
    """Every supported op type -> (first opset, last opset, supported attributes)."""
    return {k: (v.since, v.until, sorted(v.attrs)) for k, v in sorted(_load_all().items())}


__all__ = ["ModelGen", "OnnxImportError", "RecordType", "generate", "load_model", "supported_ops"]
