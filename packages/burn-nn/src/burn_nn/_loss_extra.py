"""`CosineEmbeddingLoss`, `PoissonNllLoss` (Burn 0.20) and `CTCLoss` (Burn 0.21), `nn::loss`."""

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


@config
class CTCLossConfig:
    """Config of `CTCLoss` (Burn 0.21's `CTCLossConfig`).

    Args:
        blank: the blank class index.
        zero_infinity: losses of samples without any alignment (+inf) become 0, and so do their
            gradients.
    """

    blank: int = 0
    zero_infinity: bool = False

    def init(self, device=None) -> CTCLoss:
        if int(self.blank) < 0:
            raise ValueError(f"CTCLossConfig: blank must be >= 0, got {self.blank}")
        return CTCLoss(blank=int(self.blank), zero_infinity=bool(self.zero_infinity))


class CTCLoss(Module):
    """Connectionist Temporal Classification loss (Burn 0.21's `CTCLoss`, torch's `CTCLoss`).

    Inputs are log-probabilities (`log_softmax(logits, 2)`), not logits.

    Shapes: log_probs `[time, batch, classes]`, targets Int `[batch, max_target_len]` (padded,
    never the blank), input_lengths and target_lengths Int `[batch]` -> `forward`: `[batch]`
    per-sample losses; `forward_with_reduction`: `[1]` (Mean divides each loss by its target
    length, then averages over the batch, as torch and Burn; Sum adds them).

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import activation as A
        >>> d = NdArray(float_dtype="float64").device()
        >>> lp = A.log_softmax(Tensor.zeros([3, 1, 2], d), 2)   # uniform over {blank, 1}
        >>> loss = CTCLossConfig().init()
        >>> t, il = Tensor.from_ints([[1]], d), Tensor.from_ints([3], d)
        >>> tl = Tensor.from_ints([1], d)
        >>> round(loss.forward(lp, t, il, tl).tolist()[0], 6)   # 6 alignments of 8: -log(6/8)
        0.287682
    """

    blank: int = 0
    zero_infinity: bool = False

    def forward(self, log_probs, targets, input_lengths, target_lengths) -> Tensor:
        from burn_tensor import module as F

        loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank)
        if self.zero_infinity:
            loss = loss.mask_fill(loss.is_inf(), 0.0)
        return loss

    def forward_with_reduction(
        self, log_probs, targets, input_lengths, target_lengths, reduction=Reduction.Mean
    ) -> Tensor:
        r = check_enum("CTCLoss", "reduction", reduction, Reduction)
        loss = self.forward(log_probs, targets, input_lengths, target_lengths)
        if r in (Reduction.Mean, Reduction.Auto):
            # torch: each loss over its target length (at least 1), then the batch mean
            lengths = target_lengths.float().clamp_min(1.0).cast(loss.dtype)
            return loss.div(lengths).mean()
        if r is Reduction.Sum:
            return loss.sum()
        raise ValueError(f"CTCLoss: reduction must be Mean, Auto or Sum, got {r.name}")


#: Burn 0.21 spells it CTCLoss; the issue's spelling
CtcLoss, CtcLossConfig = CTCLoss, CTCLossConfig
