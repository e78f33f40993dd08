"""`CosineEmbeddingLoss` and `PoissonNllLoss` (Burn's `nn::loss`)."""

from __future__ import annotations

import math

from burn_tensor import Float, Int, Tensor, TensorCheckError, linalg
from burn_tensor import activation as A

from ._config import config
from ._loss import Reduction
from ._module import Module
from ._util import check_enum


@config
class CosineEmbeddingLossConfig:
    """Config of `CosineEmbeddingLoss`.

    Args:
        margin: for dissimilar pairs (target -1) the loss is max(0, cos - margin).
        reduction: "Mean" (default) or "Sum" (Burn refuses the others).
    """

    margin: float = 0.0
    reduction: str = "Mean"

    def init(self, device=None) -> CosineEmbeddingLoss:
        r = check_enum("CosineEmbeddingLossConfig", "reduction", self.reduction, Reduction)
        if r not in (Reduction.Mean, Reduction.Sum):
            raise ValueError(
                f"CosineEmbeddingLossConfig: reduction must be Mean or Sum, got {r.name}"
            )
        return CosineEmbeddingLoss(margin=float(self.margin), reduction=r.name)


class CosineEmbeddingLoss(Module):
    """Pairs of embeddings labelled similar (1) or dissimilar (-1): `1 - cos(x1, x2)` for
    similar pairs, `max(0, cos(x1, x2) - margin)` for dissimilar ones, 0 for any other label
    (Burn; torch's `CosineEmbeddingLoss`). cos is `linalg.cosine_similarity` along dim 1.

    Shapes: input1, input2 `[batch, dim]`, target Int `[batch]` -> `[1]`
    (`forward_no_reduction`: `[batch]`).

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> x = Tensor.from_data([[1.0, 0.0], [0.0, 1.0]], d)
        >>> y = Tensor.from_data([[1.0, 0.0], [1.0, 0.0]], d)
        >>> loss = CosineEmbeddingLossConfig().init()
        >>> loss.forward_no_reduction(x, y, Tensor.from_ints([1, -1], d)).tolist()
        [0.0, 0.0]
    """

    margin: float = 0.0
    reduction: str = "Mean"

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        loss = self.forward_no_reduction(input1, input2, target)
        return loss.mean() if self.reduction == "Mean" else loss.sum()

    def forward_no_reduction(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        op = "CosineEmbeddingLoss"
        problems = []
        for name, t in (("input1", input1), ("input2", input2)):
            if not isinstance(t, Tensor) or t.kind is not Float or t.rank() != 2:
                problems.append(f"{name} must be a Float [batch, dim] tensor, got {_desc(t)}")
        if not isinstance(target, Tensor) or target.kind is not Int or target.rank() != 1:
            problems.append(f"target must be an Int [batch] tensor, got {_desc(target)}")
        if not problems:
            (b1, d1), (b2, d2), (bt,) = input1.dims(), input2.dims(), target.dims()
            if (b1, d1) != (b2, d2):
                problems.append(f"input1 {[b1, d1]} and input2 {[b2, d2]} differ")
            if bt != b1:
                problems.append(f"target has {bt} labels for a batch of {b1}")
        if problems:
            raise TensorCheckError(op, problems)
        cos = linalg.cosine_similarity(input1, input2, 1).squeeze_dim(1)
        zero = cos.zeros_like()
        similar = cos.neg().add_scalar(1.0)
        dissimilar = A.relu(cos.sub_scalar(self.margin))
        loss = zero.mask_where(target.equal_elem(1), similar)
        return loss.mask_where(target.equal_elem(-1), dissimilar)


def _desc(t) -> str:
    if isinstance(t, Tensor):
        return f"{t.kind.value} {t.dims()}"
    return type(t).__name__


@config
class PoissonNllLossConfig:
    """Config of `PoissonNllLoss`.

    Args:
        log_input: predictions are log-rates (loss `exp(p) - t p`) rather than rates
            (`p - t log(p + eps)`).
        full: add Stirling's approximation of log(t!) where t > 1.
        eps: > 0, keeps log away from 0 when `log_input` is False.
    """

    log_input: bool = True
    full: bool = False
    eps: float = 1e-8

    def init(self, device=None) -> PoissonNllLoss:
        if not self.eps > 0:
            raise ValueError(f"PoissonNllLossConfig: eps must be > 0, got {self.eps}")
        return PoissonNllLoss(log_input=self.log_input, full=self.full, eps=float(self.eps))


class PoissonNllLoss(Module):
    """Negative log likelihood of a Poisson distribution (Burn's `PoissonNllLoss`, torch's
    `PoissonNLLLoss`); targets must be >= 0, and predictions too when `log_input` is False
    (checked: one read of each).

    Shapes: predictions and targets of one shape -> `[1]` (`forward_no_reduction`: the shape).

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray(float_dtype="float64").device()
        >>> p, t = Tensor.from_data([0.0, 1.0], d), Tensor.from_data([1.0, 0.0], d)
        >>> out = PoissonNllLossConfig().init().forward_no_reduction(p, t)
        >>> [round(v, 6) for v in out.tolist()]
        [1.0, 2.718282]
    """

    log_input: bool = True
    full: bool = False
    eps: float = 1e-8

    def forward(self, predictions: Tensor, targets: Tensor, reduction=Reduction.Mean) -> Tensor:
        r = check_enum("PoissonNllLoss", "reduction", reduction, Reduction)
        if r not in (Reduction.Mean, Reduction.Auto, Reduction.Sum):
            raise ValueError(f"PoissonNllLoss: reduction must be Mean, Auto or Sum, got {r.name}")
        loss = self.forward_no_reduction(predictions, targets)
        return loss.sum() if r is Reduction.Sum else loss.mean()

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        op = "PoissonNllLoss"
        for name, t in (("predictions", predictions), ("targets", targets)):
            if not isinstance(t, Tensor) or t.kind is not Float:
                raise TensorCheckError(op, f"{name} must be a Float tensor, got {_desc(t)}")
        if predictions.dims() != targets.dims():
            raise TensorCheckError(
                op, f"predictions {predictions.dims()} and targets {targets.dims()} differ"
            )
        if not bool(targets.greater_equal_elem(0.0).all().into_scalar()):
            raise TensorCheckError(op, "all targets must be >= 0")
        nonneg = predictions.greater_equal_elem(0.0).all()
        if not self.log_input and not bool(nonneg.into_scalar()):
            raise TensorCheckError(op, "with log_input=False all predictions must be >= 0")
        if self.log_input:
            loss = predictions.exp().sub(targets.mul(predictions))
        else:
            loss = predictions.sub(targets.mul(predictions.add_scalar(self.eps).log()))
        if self.full:
            # t log t - t + 0.5 log(2 pi t), only where t > 1 (0 elsewhere; t log t is NaN at 0)
            big = targets.greater_elem(1.0)
            safe = targets.mask_fill(big.bool_not(), 2.0)
            stirling = (
                safe.mul(safe.log())
                .sub(safe)
                .add(safe.mul_scalar(2.0 * math.pi).log().mul_scalar(0.5))
            )
            loss = loss.add(stirling.mask_fill(big.bool_not(), 0.0))
        return loss
