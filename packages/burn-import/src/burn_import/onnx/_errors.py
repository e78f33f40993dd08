"""`OnnxImportError`: every refusal of an ONNX file, raised at import time, never at run time."""

from __future__ import annotations

from .._errors import RecordImportError


class OnnxImportError(RecordImportError):
    """An ONNX file could not be imported: malformed bytes, a broken graph, or an unsupported op.

    The message names what was wrong; for an op it names the op type, the node and the opset,
    e.g. `unsupported ONNX op 'Foo' (node 'n1', opset 17): no converter`.

    Attributes:
        op_type, node, opset: set when a node is at fault (else None).

    Example:
        >>> from burn_import.onnx import OnnxImportError, load_model
        >>> try:
        ...     load_model(b"\\x08\\x07\\x12")
        ... except OnnxImportError as err:
        ...     print(str(err).split(":")[0])
        not a valid ONNX model
    """

    def __init__(
        self,
        message: str,
        op_type: str | None = None,
        node: str | None = None,
        opset: int | None = None,
    ):
        self.op_type, self.node, self.opset = op_type, node, opset
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (str(self), self.op_type, self.node, self.opset))


def op_error(op_type: str, node: str, opset: int, why: str) -> OnnxImportError:
    """The error for a node that cannot be converted: names the op, the node and the opset."""
    return OnnxImportError(
        f"unsupported ONNX op {op_type!r} (node {node!r}, opset {opset}): {why}",
        op_type,
        node,
        opset,
    )


def unknown_error(op_type: str, node: str, opset: int, what: str) -> OnnxImportError:
    """The error for a supported op whose input or output type shape inference left unknown:
    says what could not be inferred, and that the op itself is supported."""
    return OnnxImportError(
        f"cannot import ONNX op {op_type!r} (node {node!r}, opset {opset}): {what} could not be "
        "inferred (the op is supported; its input comes from values only known at run time)",
        op_type,
        node,
        opset,
    )
