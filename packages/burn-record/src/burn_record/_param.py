"""`ParamRecord`: a parameter's tensor together with its stable `ParamId`."""

from __future__ import annotations

from dataclasses import dataclass

from burn_tensor.quantization import QuantizedData

from ._dtypes import DType, TensorData


@dataclass(eq=True, repr=False)
class ParamRecord:
    """A recorded parameter: the tensor data plus the id optimizers key their state by.

    Serialized as Burn's `ParamSerde`: `{"id": str, "param": {"bytes", "shape", "dtype"}}`. The id
    survives every round trip unchanged, so optimizer state saved beside the model stays valid.

    Args:
        id: the parameter's `ParamId` as a string.
        value: the parameter's tensor contents.

    Example:
        >>> p = ParamRecord("k3b7", TensorData([1.0, 2.0]))
        >>> p.id, p.shape, p.dtype
        ('k3b7', Shape([2]), DType.F32)
        >>> p
        ParamRecord(id='k3b7', shape=[2], dtype=float32)
    """

    id: str
    value: TensorData

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise TypeError(f"ParamRecord.id must be a str, got {type(self.id).__name__}")
        if not isinstance(self.value, TensorData | QuantizedData):
            raise TypeError(
                "ParamRecord.value must be a TensorData (or a QuantizedData), got "
                f"{type(self.value).__name__}"
            )

    def __repr__(self) -> str:
        # A parameter can hold millions of values; show what identifies it, not its contents.
        return f"ParamRecord(id={self.id!r}, shape={list(self.shape)}, dtype={self.dtype.value})"

    @property
    def shape(self):
        return self.value.shape

    @property
    def dtype(self) -> DType:
        return self.value.dtype
