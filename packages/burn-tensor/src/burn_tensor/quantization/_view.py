"""The kind view of quantized tensors: every op with no quantized kernel dequantizes and runs.

A Tensor dispatches through `t._o.<op>(primitives...)`. A quantized tensor's `_o` is a
`QuantView`: it answers every name of the backend's Float view with a wrapper that dequantizes
each `QuantizedPrimitive` argument, runs the float op, and, when the first quantized input's
scheme says `QuantPropagation.PROPAGATE`, requantizes a float result with that scheme (MinMax,
dynamic), as Burn's default `QTensorOps` do; with `INHIBIT` (Burn's default) the result is float.
"""

from __future__ import annotations

import threading

from .._dtype import DType, Float
from ._primitive import QuantizedPrimitive
from ._scheme import QuantPropagation

_views: dict = {}
_lock = threading.Lock()


def quant_view(backend):
    """The (cached) quantized kind view of `backend`."""
    v = _views.get(backend)
    if v is None:
        with _lock:
            v = _views.setdefault(backend, QuantView(backend))
    return v


def _is_float_primitive(p) -> bool:
    try:
        return hasattr(p, "shape") and DType.from_np(p.dtype).is_float()
    except (TypeError, AttributeError):
        return False


class QuantView:
    """Float-kind op namespace for quantized primitives (see the module docstring)."""

    kind = Float

    def __init__(self, backend):
        self.backend = backend
        self._float = backend.kind_ops[Float]
        self.dtype = backend.float_dtype

    def _deq(self, a):
        if type(a) is QuantizedPrimitive:
            return self.backend.q_dequantize(a)
        if type(a) in (list, tuple) and any(type(e) is QuantizedPrimitive for e in a):
            return type(a)(self._deq(e) for e in a)
        return a

    # Moving and detaching keep a tensor quantized (the generic path below would dequantize).
    def detach(self, p):
        """Quantized tensors are never tracked by autodiff: nothing to cut, `p` unchanged."""
        return p

    def to_device(self, p, device):
        return self.backend.q_to_device(p, device) if type(p) is QuantizedPrimitive else self._float.to_device(p, device)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "matmul":  # the backend's quantized matmul (int8 kernels where it has them)
            run = self.backend.q_matmul
            self.__dict__[name] = run
            return run
        attr = getattr(self._float, name)
        if not callable(attr):
            return attr
        backend = self.backend

        def run(*args, **kwargs):
            scheme = None
            for a in args:
                if type(a) is QuantizedPrimitive:
                    scheme = a.scheme
                    break
            out = attr(*(self._deq(a) for a in args), **kwargs)
            if (
                scheme is not None
                and scheme.propagation is QuantPropagation.PROPAGATE
                and _is_float_primitive(out)
                and len(out.shape) > 0
                and (not scheme.level.is_block() or out.shape[-1] % scheme.level.block_size == 0)
            ):
                return backend.q_quantize_dynamic(out, scheme)
            return out

        run.__name__ = name
        self.__dict__[name] = run  # cache: later lookups skip __getattr__
        return run
