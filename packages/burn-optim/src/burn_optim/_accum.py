"""`GradientsAccumulator`: sum gradients over several backward passes (Burn's `grad_accum`)."""

from __future__ import annotations

from typing import Any

from burn_nn import Param

from ._grads import GradientsParams, _Visitor


class GradientsAccumulator:
    """Adds up `GradientsParams` per `ParamId`, then hands the sum to `optim.step`.

    Only the gradients of `module`'s float parameters are kept (as in Burn); summing (not
    averaging) matches Burn, so scale the learning rate or the loss yourself if you want a mean.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_autodiff import Autodiff
        >>> from burn_tensor import Tensor
        >>> from burn_nn import LinearConfig
        >>> device = Autodiff(NdArray()).device()
        >>> model = LinearConfig(2, 1).init(device)
        >>> acc = GradientsAccumulator()
        >>> for _ in range(3):
        ...     loss = model.forward(Tensor.ones([1, 2], device)).sum()
        ...     acc.accumulate(model, GradientsParams.from_grads(loss.backward(), model))
        >>> acc.grads().get(model.bias.id).tolist()
        [3.0]
    """

    def __init__(self) -> None:
        self._grads = GradientsParams()

    new = classmethod(lambda cls: cls())

    def accumulate(self, module: Any, grads: GradientsParams) -> None:
        """Add `grads` (consumed) to the running sum, parameter by parameter."""
        acc = self._grads

        def visit_float(param: Param) -> None:
            new = grads.remove(param.id)
            old = acc.remove(param.id)
            total = new if old is None else old if new is None else old + new
            if total is not None:
                acc.register(param.id, total)

        module.visit(_Visitor(visit_float))

    def grads(self) -> GradientsParams:
        """The sum so far; the accumulator is empty afterwards."""
        out, self._grads = self._grads, GradientsParams()
        return out

    def __len__(self) -> int:
        return len(self._grads)
