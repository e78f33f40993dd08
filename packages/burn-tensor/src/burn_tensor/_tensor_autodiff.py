"""Autodiff methods of `Tensor` (Burn's `AutodiffBackend` API): require_grad, backward, grad, ..."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _check as check
from ._autocast import scaled_for_backward
from ._dtype import Float
from ._errors import TensorCheckError
from ._registry import autodiff_device_for

if TYPE_CHECKING:
    from ._device import Device
    from ._tensor import Tensor


class AutodiffMixin:
    __slots__ = ()

    # -- autodiff ------------------------------------------------------------------------------------
    def require_grad(self) -> Tensor:
        """Mark a Float tensor as a leaf that accumulates gradients (no-op without Autodiff)."""
        # `set_require_grad(True)` inline (its check too): an optimizer step runs this once per
        # parameter (`Param.updated`)
        o = self._o
        if o.kind is not Float:
            check.float_("set_require_grad", self)
        return self._like(o.set_require_grad(self._p, True))

    def set_require_grad(self, require_grad: bool) -> Tensor:
        """A tensor tracked (or not) by autodiff as a leaf that wants a gradient (Burn's
        `set_require_grad`).
        """
        check.float_("set_require_grad", self)
        return self._like(self._o.set_require_grad(self._p, bool(require_grad)))

    def is_require_grad(self) -> bool:
        """Whether autodiff tracks this tensor as a leaf that wants a gradient (Burn's
        `is_require_grad`).
        """
        return self._o.kind is Float and self._o.is_require_grad(self._p)

    def detach(self) -> Tensor:
        """The same values cut from the autodiff graph: no gradient flows through the result (Burn's
        `detach`).
        """
        if self._o.kind is not Float:
            return self
        return self._like(self._o.detach(self._p))

    def backward(self, gradient: Tensor | None = None):
        """Gradients of this tensor w.r.t. every tracked tensor (Burn's `backward`).

        Without `gradient` the pass starts from ones, so a non-scalar tensor is summed (Burn's
        semantics). `gradient` (torch's `out.backward(g)`) starts it from that tensor instead:
        same shape and dtype as this one, on this device or on its inner backend's; its own
        tracking is ignored. It gives the gradients of `(self * gradient).sum()` without running
        that multiply and sum.

        Example:
            >>> from burn_tensor import Tensor
            >>> from burn_autodiff import Autodiff
            >>> from burn_ndarray import NdArray
            >>> dev = Autodiff(NdArray()).device()
            >>> x = Tensor.from_data([1.0, 2.0, 3.0], dev).require_grad()
            >>> grads = (x * x).backward(Tensor.from_data([1.0, 0.0, -1.0], dev))
            >>> x.grad(grads).to_data().tolist()
            [2.0, 0.0, -6.0]
        """
        check.float_("backward", self)
        seed = None if gradient is None else self._seed(gradient)
        # inside `autocast(..., loss_scale=s)` (a loss scaler's step): backpropagate loss * s
        root = scaled_for_backward(self)._p
        b = self._d.backend
        return b.backward(root) if seed is None else b.backward(root, seed)

    def _seed(self, gradient) -> object:
        """`backward(gradient)`'s seed as a primitive of the inner backend, checked."""
        from ._tensor import Tensor

        if not isinstance(gradient, Tensor) or gradient._o.kind is not Float:
            got = (
                f"a tensor of kind {gradient._o.kind.value}"
                if isinstance(gradient, Tensor)
                else type(gradient).__name__
            )
            raise TensorCheckError("backward", f"gradient: expected a Float tensor, got {got}")
        if gradient._p.shape != self._p.shape or gradient.dtype != self.dtype:
            raise TensorCheckError(
                "backward",
                f"gradient: expected shape {list(self._p.shape)} {self.dtype.value}, got "
                f"{list(gradient._p.shape)} {gradient.dtype.value}",
            )
        d = self._d
        if gradient._d == d:
            b = d.backend
            return b.inner_primitive(gradient._p, Float) if b.is_autodiff else gradient._p
        if d.backend.is_autodiff and gradient._d == d.inner():
            return gradient._p
        raise TensorCheckError(
            "backward", f"gradient: expected a tensor on {d} or its inner device, got {gradient._d}"
        )

    def grad(self, grads):
        """This tensor's gradient in `grads` as a tensor on the inner backend, or None."""
        b = self._d.backend
        if not b.is_autodiff:
            raise TensorCheckError("grad", f"backend {b!r} has no autodiff; use Autodiff({b!r})")
        g = b.grad(self._p, grads)
        return None if g is None else self._make(g, Float, self._d.inner())

    def grad_remove(self, grads):
        """This tensor's gradient taken out of `grads` (None if it has none) (Burn's `grad_remove`).
        """
        b = self._d.backend
        if not b.is_autodiff:
            raise TensorCheckError("grad_remove", f"backend {b!r} has no autodiff")
        g = b.grad_remove(self._p, grads)
        return None if g is None else self._make(g, Float, self._d.inner())

    def grad_replace(self, grads, grad: Tensor) -> None:
        """Sets this tensor's gradient in `grads` to `grad` (Burn's `grad_replace`)."""
        b = self._d.backend
        if not b.is_autodiff:
            raise TensorCheckError("grad_replace", f"backend {b!r} has no autodiff")
        from ._tensor import Tensor

        # A mis-shaped gradient would be stored as is and fail (or broadcast) in the optimizer.
        if (
            not isinstance(grad, Tensor)
            or grad._o.kind is not Float
            or grad._p.shape != self._p.shape
        ):
            got = (
                f"{grad._o.kind.value} {list(grad._p.shape)}"
                if isinstance(grad, Tensor)
                else type(grad).__name__
            )
            raise TensorCheckError(
                "grad_replace",
                f"expected a Float gradient of shape {list(self._p.shape)}, got {got}",
            )
        b.grad_replace(self._p, grads, grad._p)

    def inner(self) -> Tensor:
        """The same tensor on the inner backend, without autodiff tracking."""
        b = self._d.backend
        if not b.is_autodiff:
            return self
        return self._make(b.inner_primitive(self._p, self._o.kind), self._o.kind, self._d.inner())

    @staticmethod
    def from_inner(tensor: Tensor, device: Device | None = None) -> Tensor:
        """Lift an inner-backend tensor onto an autodiff device (not tracked)."""
        if device is None:
            device = autodiff_device_for(tensor._d)
        kind = tensor._o.kind
        return tensor._make(device.backend.from_inner_primitive(tensor._p, kind), kind, device)
