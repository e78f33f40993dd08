"""`Autodiff(inner)`: the backend decorator that records a graph and runs reverse-mode autodiff."""

from __future__ import annotations

from typing import Any

from burn_tensor import Backend, Device, Float
from burn_tensor.backend import Step, describe, register_autodiff
from burn_tensor.ops import op_decl

from ._checkpoint import CheckpointStrategy, NoCheckpointing
from ._graph import Gradients, new_leaf, run_backward
from ._rules_nn import ATTENTION_SAVED
from ._table import NONDIFF, TABLE, classify, route  # noqa: F401 - NONDIFF, classify: public
from ._tensor import AutodiffTensor, wrap
from ._wrap import passthrough, tracked


def _op(name: str, inner, balanced: bool):
    """The per-instance op `name` over `inner`'s op, as its route says (rule or pass)."""
    r = route(name)
    if r.how == "rule":
        if r.rule is None:
            return _missing_rule(name)
        return tracked(r.rule, getattr(inner, name), inner, balanced)
    return passthrough(name, getattr(inner, name))


def _missing_rule(name: str):
    def op(*args):
        raise NotImplementedError(
            f"Autodiff: {name} is declared with a gradient rule (burn_tensor's DECLS) but "
            f"burn_autodiff has none; add RULES[{name!r}]"
        )

    op.__name__ = name
    return op


def has_flash_attention(inner) -> bool:
    """Whether `inner` implements the flash-attention ops itself (a forward that returns its
    saved statistic and a backward that takes it; the contract's defaults keep none): then
    Autodiff's `attention` records the rule that keeps them and calls that backward."""
    names = ("attention_with_lse", "attention_lse_backward")
    # an instance attribute (Fusion's delegate) or another class's method is the backend's own
    return all(getattr(getattr(inner, n), "__func__", None) is not getattr(Backend, n) for n in names)


def flash_attention(inner, balanced: bool):
    """Autodiff's `attention` over `inner.attention_with_lse`: the node keeps (output, lse),
    the caller gets the output."""
    recorded = tracked(ATTENTION_SAVED, inner.attention_with_lse, inner, balanced)

    def attention(query, key, value, mask, causal, scale, *drop):
        return recorded(query, key, value, mask, causal, scale, *drop)[0]

    return attention


def _class_level(name: str):
    # The real op is the per-instance closure; this makes the class complete for introspection
    # (`Autodiff.missing_ops()` is empty) and serves instances built without `setup`.
    def op(self, *args):
        fn = self.__dict__.get(name)
        if fn is None:
            fn = _op(name, self.inner, self.checkpointing.balanced)
        return fn(*args)

    op.__name__ = op.__qualname__ = name
    return op


#: the class-level ops, from the dispatch table: every op Autodiff records or passes on
CLASS_OPS = {name: _class_level(name) for name, r in TABLE.items() if r.how in ("rule", "pass")}


class Autodiff(Backend, ops=CLASS_OPS):
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
        for name, r in TABLE.items():
            if r.how in ("rule", "pass"):
                object.__setattr__(self, name, _op(name, inner, balanced))
        if has_flash_attention(inner):
            object.__setattr__(self, "attention", flash_attention(inner, balanced))

    def __getattr__(self, name: str) -> Any:
        # Ops outside the table (backend extensions): tracked if a rule was registered for the
        # name, else forwarded to the inner backend without recording.
        if name.startswith("_") or "inner" not in self.__dict__:
            raise AttributeError(name)
        inner_fn = getattr(self.__dict__["inner"], name)
        if not callable(inner_fn):
            return inner_fn
        fn = _op(name, self.__dict__["inner"], self.checkpointing.balanced)
        object.__setattr__(self, name, fn)
        return fn

    def dlpack_primitive(self, x: Any) -> Any:
        """The array DLPack exports for primitive `x` (its memory, no copy): the inner
        backend's, so `torch.from_dlpack` of an `Autodiff(Cuda())` tensor shares the GPU
        buffer. Int/bool primitives are the inner backend's already."""
        p = x.p if type(x) is AutodiffTensor else x
        hook = getattr(self.inner, "dlpack_primitive", None)
        return p if hook is None else hook(p)

    def explain_route(self, op: str, args: list) -> list:
        """Autodiff's step for `op` (its route in `TABLE`), then the inner backend's steps."""
        r, who = route(op), repr(self)
        if r.how == "rule":
            impl, where = describe(r.rule.backward) if r.rule else (f"RULES[{op!r}]", "missing")
            why = (
                f"the inner op runs; with a tracked input a graph node keeps inputs {r.rule.keep}"
                f"{' and the output' if r.rule.out else ''} for this backward"
                if r.rule
                else "declared with a rule that burn_autodiff lacks"
            )
            return [Step(who, "rule", impl, where, why)] + self.inner.explain_route(op, args)
        if r.how == "pass":
            impl, where = describe(passthrough)
            why = "not differentiable here: the inner op's result is not tracked"
            return [Step(who, "pass", impl, where, why)] + self.inner.explain_route(op, args)
        if r.how == "special":
            impl, where = describe(vars(Autodiff)[op])
            return [Step(who, "special", impl, where, "Autodiff's own graph bookkeeping")]
        impl, where = describe(op_decl(op).default)
        why = "the default runs on Autodiff: each op it calls is recorded and differentiated"
        return [Step(who, "default", impl, where, why)]

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
    def backward(self, x: AutodiffTensor, gradient: Any = None) -> Gradients:
        """Gradients of `x` w.r.t. every leaf that requires grad, the pass seeded with
        `gradient` (an inner primitive of `x`'s shape and dtype) or with ones (summed)."""
        return run_backward(x, gradient)

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


# `Tensor.from_inner(t)` without a device lifts onto Autodiff over t's backend.
register_autodiff(Autodiff)
