"""`Autodiff(inner)`: the backend decorator that records a graph and runs reverse-mode autodiff."""

from __future__ import annotations

from typing import Any

from burn_tensor import Backend, Device, Float, op_table
from burn_tensor.backend import register_autodiff

from . import _rules_layout, _rules_math, _rules_nn, _rules_reduce  # noqa: F401 - fill RULES
from ._checkpoint import CheckpointStrategy, NoCheckpointing
from ._graph import Gradients, new_leaf, run_backward
from ._rule import RULES
from ._rules_nn import ATTENTION_SAVED
from ._tensor import AutodiffTensor, wrap
from ._wrap import passthrough, tracked

# Float ops with no gradient: their outputs are not float, or are fresh data (creation ops).
NONDIFF = frozenset(
    [
        "float_into_data",
        "float_from_data",
        "float_empty",
        "float_zeros",
        "float_ones",
        "float_full",
        "float_random",
        "float_into_int",
        "float_equal",
        "float_not_equal",
        "float_equal_elem",
        "float_not_equal_elem",
        "float_greater",
        "float_greater_elem",
        "float_greater_equal",
        "float_greater_equal_elem",
        "float_lower",
        "float_lower_elem",
        "float_lower_equal",
        "float_lower_equal_elem",
        "float_argmax",
        "float_argmin",
        "float_argsort",
        "float_is_nan",
        "float_is_inf",
        "float_any",
        "float_any_dim",
        "float_all",
        "float_all_dim",
        # one-hot of class indices: the indices are truncated to ints, nothing to differentiate
        "float_one_hot_fill",
        # reads data: the inner backend's own (one-transfer) read of the inner primitives
        "tr_execute",
    ]
)
# Handled by `Autodiff` itself.
SPECIAL = frozenset({"float_detach", "float_set_require_grad", "float_is_require_grad"})


def classify(name: str) -> str:
    """How Autodiff implements op `name`: "rule" (recorded with a gradient rule), "special",
    "pass" (inner op, nothing recorded) or "default" (the base-class decomposition, run on
    Autodiff, so it is differentiated through the ops it is made of)."""
    if name in SPECIAL:
        return "special"
    if name in RULES:
        return "rule"
    if (
        name.startswith(("int_", "bool_", "bitwise_"))
        or name in NONDIFF
        or name.endswith("_backward")
    ):
        return "pass"
    base = getattr(Backend, name, None)
    if base is None or getattr(base, "__burn_required__", False):
        return "pass"
    return "default"


def has_flash_attention(inner) -> bool:
    """Whether `inner` has the flash-attention extension ops (a forward that returns its saved
    statistic and a backward that takes it): then Autodiff's `attention` records the rule that
    keeps them and calls that backward."""
    return all(
        callable(getattr(inner, n, None)) for n in ("attention_with_lse", "attention_lse_backward")
    )


def flash_attention(inner, balanced: bool):
    """Autodiff's `attention` over `inner.attention_with_lse`: the node keeps (output, lse),
    the caller gets the output."""
    recorded = tracked(ATTENTION_SAVED, inner.attention_with_lse, inner, balanced)

    def attention(query, key, value, mask, causal, scale):
        return recorded(query, key, value, mask, causal, scale)[0]

    return attention


class Autodiff(Backend):
    """Backend decorator adding reverse-mode autodiff to any backend.

    Float tensors are tracked when they require grad or descend from one; int and bool tensors are
    the inner backend's own. Gradients come back in a `Gradients` container, never on tensors.

    Args:
        inner: the backend to decorate (`NdArray()`, ...).
        checkpointing: `NoCheckpointing()` (default) or `BalancedCheckpointing()`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> device = Autodiff(NdArray()).device()
        >>> x = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device).require_grad()
        >>> y = Tensor.from_data([[1.0, 1.0], [1.0, 1.0]], device)
        >>> grads = (x @ y).sum().backward()
        >>> x.grad(grads).tolist()
        [[2.0, 2.0], [2.0, 2.0]]
    """

    is_autodiff = True

    def __init__(self, inner: Backend, checkpointing: CheckpointStrategy | None = None):
        if not isinstance(inner, Backend):
            raise TypeError(f"Autodiff: inner must be a Backend, got {type(inner).__name__}")
        if inner.is_autodiff:
            raise ValueError(
                f"Autodiff: {inner!r} already has autodiff (only first order is supported)"
            )
        checkpointing = NoCheckpointing() if checkpointing is None else checkpointing
        if not isinstance(checkpointing, CheckpointStrategy):
            raise TypeError(
                f"Autodiff: checkpointing must be a CheckpointStrategy, got {checkpointing!r}"
            )
        s = object.__setattr__
        s(self, "inner", inner)
        s(self, "checkpointing", checkpointing)
        s(self, "name", f"autodiff<{inner.name}>")
        s(self, "device_kind", inner.device_kind)
        s(self, "float_dtype", inner.float_dtype)
        s(self, "int_dtype", inner.int_dtype)

    def options(self) -> dict:
        return {"inner": self.inner, "checkpointing": self.checkpointing}

    def __repr__(self) -> str:
        cp = (
            ""
            if type(self.checkpointing) is NoCheckpointing
            else f", checkpointing={self.checkpointing!r}"
        )
        return f"Autodiff({self.inner!r}{cp})"

    def setup(self) -> None:
        # Per-instance closures bound to the inner backend's methods: one call frame per op.
        inner = self.inner
        balanced = self.checkpointing.balanced
        for name in op_table():
            how = classify(name)
            if how == "rule":
                fn = tracked(RULES[name], getattr(inner, name), inner, balanced)
            elif how == "pass":
                fn = passthrough(name, getattr(inner, name))
            else:
                continue
            object.__setattr__(self, name, fn)
        if has_flash_attention(inner):
            object.__setattr__(self, "attention", flash_attention(inner, balanced))

    def __getattr__(self, name: str) -> Any:
        # Ops outside the table (backend extensions): tracked if a rule was registered for the
        # name, else forwarded to the inner backend without recording.
        if name.startswith("_") or "inner" not in self.__dict__:
            raise AttributeError(name)
        inner = self.__dict__["inner"]
        inner_fn = getattr(inner, name)
        if not callable(inner_fn):
            return inner_fn
        r = RULES.get(name)
        fn = (
            tracked(r, inner_fn, inner, self.checkpointing.balanced)
            if r
            else passthrough(name, inner_fn)
        )
        object.__setattr__(self, name, fn)
        return fn

    def dlpack_primitive(self, x: Any) -> Any:
        """The array DLPack exports for primitive `x` (its memory, no copy): the inner
        backend's, so `torch.from_dlpack` of an `Autodiff(Cuda())` tensor shares the GPU
        buffer. Int/bool primitives are the inner backend's already."""
        p = x.p if type(x) is AutodiffTensor else x
        hook = getattr(self.inner, "dlpack_primitive", None)
        return p if hook is None else hook(p)

    # -- devices ------------------------------------------------------------------------------------
    def device_of(self, x: Any) -> Any:
        p = x.p if type(x) is AutodiffTensor else x
        return Device(self, self.inner.device_of(p).index)  # no device-count call, as Fusion's

    def device_count(self) -> int:
        return self.inner.device_count()

    def seed(self, seed: int, device=None) -> None:
        self.inner.seed(seed, None if device is None else device.inner())

    def sync(self, device=None) -> None:
        self.inner.sync(None if device is None else device.inner())

    # -- tracking -----------------------------------------------------------------------------------
    def float_detach(self, x: AutodiffTensor) -> AutodiffTensor:
        return x if x.node is None else wrap(x.p, None)

    def float_set_require_grad(self, x: AutodiffTensor, require_grad: bool) -> AutodiffTensor:
        node = x.node
        if not require_grad:
            return x if node is None else wrap(x.p, None)
        if node is not None:
            if node.leaf:
                return x
            raise ValueError(
                "require_grad: cannot mark a non-leaf tensor (computed from tracked tensors) as a "
                "leaf; call detach() first"
            )
        keep = x.p if self.checkpointing.balanced else None
        return wrap(x.p, new_leaf(self.inner, keep))

    def float_is_require_grad(self, x: AutodiffTensor) -> bool:
        return x.node is not None

    # -- gradients ----------------------------------------------------------------------------------
    def backward(self, x: AutodiffTensor) -> Gradients:
        """Gradients of `x` (summed if not a scalar) w.r.t. every leaf that requires grad."""
        return run_backward(x)

    def grad_ready(self, tensors, callback):
        """`burn_autodiff.grad_ready(tensors, callback)`, reachable from a tensor's backend by
        code that does not import burn_autodiff (burn-train's bucket reducer)."""
        from ._ready import grad_ready

        return grad_ready(tensors, callback)

    def grad(self, x: AutodiffTensor, grads: Gradients) -> Any:
        return grads.get(x.node)

    def grad_remove(self, x: AutodiffTensor, grads: Gradients) -> Any:
        return grads.remove(x.node)

    def grad_replace(self, x: AutodiffTensor, grads: Gradients, grad: Any) -> None:
        if x.node is None:
            raise ValueError("grad_replace: the tensor is not tracked (call require_grad() first)")
        grads.register(x.node, grad.p if type(grad) is AutodiffTensor else grad)

    def inner_primitive(self, x: Any, kind) -> Any:
        return x.p if kind is Float else x

    def from_inner_primitive(self, p: Any, kind) -> Any:
        return wrap(p, None) if kind is Float else p


def _class_level(name: str):
    # The real op is the per-instance closure; this makes the class complete for introspection
    # (`Autodiff.missing_ops()` is empty) and serves instances built without `setup`.
    def op(self, *args):
        fn = self.__dict__.get(name)
        if fn is None:
            how = classify(name)
            inner = self.inner
            if how == "rule":
                fn = tracked(RULES[name], getattr(inner, name), inner, self.checkpointing.balanced)
            else:
                fn = passthrough(name, getattr(inner, name))
        return fn(*args)

    op.__name__ = op.__qualname__ = name
    return op


for _name in op_table():
    if classify(_name) in ("rule", "pass"):
        setattr(Autodiff, _name, _class_level(_name))

# `Tensor.from_inner(t)` without a device lifts onto Autodiff over t's backend.
register_autodiff(Autodiff)
