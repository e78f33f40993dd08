"""Optimizer state trees: moving them between devices and to/from records.

A per-parameter state is a nested dict whose leaves are tensors, ints, floats or None (Burn's
`#[derive(Record)]` state structs, field names kept). In a record the tensors become `TensorData`,
which every `burn_record` recorder can write; loading keeps the `TensorData` and turns it back into
a tensor on the parameter's device (and in its dtype) at the next step, as Burn's
`SimpleOptimizer::to_device` does.
"""

from __future__ import annotations

from typing import Any

from burn_tensor import Device, DType, Tensor, TensorData


def state_to_device(state: Any, device: Device, dtype: DType | None = None) -> Any:
    """`state` with every tensor (or `TensorData` from a record) on `device`, in `dtype`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> s = state_to_device({"time": 2, "m": TensorData([1.0, 2.0])}, d)
        >>> s["time"], s["m"].tolist()
        (2, [1.0, 2.0])
    """
    # Exact-type tests first: the optimizer moves each parameter's state tree on every step, and
    # its leaves are plain dicts, Tensors, ints and None.
    tp = type(state)
    if tp is dict:
        # The usual case (every step, every parameter): nothing moves. Leaves are checked inline
        # and the dict itself is returned when none changed; a copy only when one did.
        new = None
        for k, v in state.items():
            t = type(v)
            if v is None or t is int:
                continue
            if t is Tensor:
                vd = v.device  # devices are interned: `is` decides the usual case
                if (vd is device or vd == device) and (dtype is None or v.dtype is dtype):
                    continue
            moved = state_to_device(v, device, dtype)
            if moved is not v:
                if new is None:
                    new = dict(state)
                new[k] = moved
        return state if new is None else new
    if tp is int or state is None:
        return state
    if isinstance(state, Tensor):
        t = state if state.device == device else state.to_device(device)
        return t if dtype is None or t.dtype is dtype else t.cast(dtype)
    if isinstance(state, TensorData):
        return Tensor.from_data(state, device, dtype or state.dtype)
    if isinstance(state, dict):
        return {k: state_to_device(v, device, dtype) for k, v in state.items()}
    if isinstance(state, list | tuple):
        return type(state)(state_to_device(v, device, dtype) for v in state)
    return state


def state_to_record(state: Any) -> Any:
    """`state` with tensors replaced by their `TensorData` (host copies; recordable).

    Example:
        >>> from burn_ndarray import NdArray
        >>> rec = state_to_record({"v": Tensor.ones([2], NdArray().device()), "t": None})
        >>> type(rec["v"]).__name__, rec["t"]
        ('TensorData', None)
    """
    if isinstance(state, Tensor):
        return state.to_data()
    if isinstance(state, dict):
        return {k: state_to_record(v) for k, v in state.items()}
    if isinstance(state, list | tuple):
        return type(state)(state_to_record(v) for v in state)
    return state
