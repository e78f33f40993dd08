"""Losses (Burn's `nn::loss`): cross entropy, binary cross entropy, MSE, Huber, Smooth L1, KL.

Every `forward` returns a `[1]` tensor when reduced; `forward_no_reduction` keeps the input shape.
"""

from __future__ import annotations

import enum
import math

import numpy as np
from burn_tensor import Int, Tensor, TensorCheckError
from burn_tensor import activation as A
from burn_tensor.checks import check_indices

from ._config import config
from ._module import Module
from ._util import check_enum


class Reduction(enum.Enum):
    """How a loss reduces: `Mean`, `Sum`, `BatchMean` (sum / batch size), `Auto` (= Mean)."""

    Mean = "Mean"
    Sum = "Sum"
    BatchMean = "BatchMean"
    Auto = "Auto"


def reduce(t: Tensor, reduction: Reduction | str = Reduction.Mean) -> Tensor:
    r = check_enum("loss", "reduction", reduction, Reduction)
    if r in (Reduction.Mean, Reduction.Auto):
        return t.mean()
    if r is Reduction.Sum:
        return t.sum()
    return t.sum().div_scalar(t.dims()[0])


def _min_log(t: Tensor) -> Tensor:
    tiny = math.sqrt(float(np.finfo(t.dtype.np).tiny))
    return t.clamp_min(tiny).log()


@config
class CrossEntropyLossConfig:
    """Config of `CrossEntropyLoss`.

    Args:
        pad_tokens: target classes whose rows contribute 0 (the mean still divides by the batch).
        weights: per-class weights (> 0): loss `-sum(w[t] * logp[t]) / sum(w[t])`.
        smoothing: label smoothing alpha in [0, 1]: targets `y (1 - alpha) + alpha / C`.
        logits: inputs are logits (log_softmax applied) rather than probabilities.
    """

    pad_tokens: list[int] | None = None
    weights: list[float] | None = None
    smoothing: float | None = None
    logits: bool = True

    def init(self, device=None) -> CrossEntropyLoss:
        if self.smoothing is not None and not 0.0 <= self.smoothing <= 1.0:
            raise ValueError(
                f"CrossEntropyLossConfig: smoothing must be in [0, 1], got {self.smoothing}"
            )
        if self.weights is not None and any(w <= 0 for w in self.weights):
            raise ValueError("CrossEntropyLossConfig: weights must all be > 0")
        return CrossEntropyLoss(
            pad_tokens=self.pad_tokens,
            weights=self.weights,
            smoothing=self.smoothing,
            logits=self.logits,
        )


class CrossEntropyLoss(Module):
    """Cross entropy of class scores against Int targets.

    Shapes: logits `[batch, num_classes]`, targets Int `[batch]` -> `[1]`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> loss = CrossEntropyLossConfig().init(d)
        >>> loss.forward(Tensor.zeros([2, 4], d), Tensor.from_ints([0, 3], d)).dims()
        [1]
    """

    pad_tokens: list[int] | None = None
    weights: list[float] | None = None
    smoothing: float | None = None
    logits: bool = True

    @classmethod
    def new(cls, pad_index: int | None = None, device=None) -> CrossEntropyLoss:
        """First-book constructor: `CrossEntropyLoss::new(pad_index, device)`."""
        return cls(pad_tokens=None if pad_index is None else [pad_index])

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        b, c = _check_ce(logits, targets)
        logp = A.log_softmax(logits, 1) if self.logits else _min_log(logits)
        dev = logits.device
        keep = None
        if self.pad_tokens:
            pad = np.isin(targets.numpy(), np.asarray(self.pad_tokens))
            keep = Tensor.from_data((~pad).astype(np.float64), dev).reshape([b, 1])
        if self.smoothing is not None:
            onehot = targets.one_hot(c).float()
            y = onehot.mul_scalar(1.0 - self.smoothing).add_scalar(self.smoothing / c)
            if self.weights is not None:
                w = Tensor.from_data(np.asarray(self.weights, dtype=np.float64), dev).reshape(
                    [1, c]
                )
                y = y.mul(w)
            rows = y.mul(logp).sum_dim(1)
        else:
            rows = logp.gather(1, targets.reshape([b, 1]))
            if self.weights is not None:
                w = Tensor.from_data(np.asarray(self.weights, dtype=np.float64), dev)
                rows = rows.mul(w.select(0, targets).reshape([b, 1]))
        if keep is not None:
            rows = rows.mul(keep)
        if self.weights is not None:
            w = Tensor.from_data(np.asarray(self.weights, dtype=np.float64), dev)
            return rows.sum().neg().div(w.select(0, targets).sum())
        return rows.sum().neg().div_scalar(b)


def _check_ce(logits: Tensor, targets: Tensor) -> tuple[int, int]:
    if logits.rank() != 2 or targets.rank() != 1 or logits.dims()[0] != targets.dims()[0]:
        raise ValueError(
            f"CrossEntropyLoss: expected logits [batch, classes] and targets [batch], "
            f"got {logits.dims()} and {targets.dims()}"
        )
    if targets.kind is not Int:
        raise TensorCheckError(
            "CrossEntropyLoss",
            f"targets must be an Int tensor of class indices, got {targets.kind}",
        )
    # A target of -1 would otherwise wrap (training the last class) and one >= C would fail
    # deep in gather: name the loss, the value and the valid classes instead.
    check_indices("CrossEntropyLoss", targets, 1, logits.dims()[1], "target class")
    return logits.dims()[0], logits.dims()[1]


@config
class BinaryCrossEntropyLossConfig:
    """Config of `BinaryCrossEntropyLoss` (`weights` per class of multi-label targets)."""

    weights: list[float] | None = None
    smoothing: float | None = None
    logits: bool = False

    def init(self, device=None) -> BinaryCrossEntropyLoss:
        return BinaryCrossEntropyLoss(
            weights=self.weights, smoothing=self.smoothing, logits=self.logits
        )


class BinaryCrossEntropyLoss(Module):
    """Binary cross entropy; inputs are probabilities unless `logits`.

    Shapes: predictions `[batch]` or `[batch, classes]`, Int targets of the same shape -> `[1]`.
    """

    weights: list[float] | None = None
    smoothing: float | None = None
    logits: bool = False

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        if logits.dims() != targets.dims():
            raise ValueError(
                f"BinaryCrossEntropyLoss: shapes differ: {logits.dims()} vs {targets.dims()}"
            )
        y = targets.float()
        if self.smoothing is not None:
            y = y.mul_scalar(1.0 - self.smoothing).add_scalar(self.smoothing / 2.0)
        if self.logits:
            loss = y.neg().add_scalar(1.0).mul(logits).sub(A.log_sigmoid(logits))
        else:
            loss = (
                y.mul(_min_log(logits))
                .add(y.neg().add_scalar(1.0).mul(_min_log(logits.neg().add_scalar(1.0))))
                .neg()
            )
        if self.weights is not None:
            w = Tensor.from_data(np.asarray(self.weights, dtype=np.float64), logits.device)
            loss = loss.mul(w.unsqueeze(loss.rank()))
        return loss.mean()


class MseLoss(Module):
    """Mean squared error: `forward(logits, targets, Reduction.Mean)`.

    Shapes: two equal shapes -> `[1]` (or the shape itself without reduction).
    """

    def forward(
        self, logits: Tensor, targets: Tensor, reduction: Reduction = Reduction.Mean
    ) -> Tensor:
        return reduce(self.forward_no_reduction(logits, targets), reduction)

    def forward_no_reduction(self, logits: Tensor, targets: Tensor) -> Tensor:
        return logits.sub(targets).square()


MSELoss = MseLoss


@config
class HuberLossConfig:
    """Config of `HuberLoss`."""

    delta: float

    def init(self, device=None) -> HuberLoss:
        return HuberLoss(delta=self.delta)


class HuberLoss(Module):
    """0.5 r^2 if |r| <= delta else delta (|r| - 0.5 delta), r = predictions - targets."""

    delta: float

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction = Reduction.Mean
    ) -> Tensor:
        return reduce(self.forward_no_reduction(predictions, targets), reduction)

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        r = predictions.sub(targets).abs()
        quad = r.square().mul_scalar(0.5)
        lin = r.sub_scalar(0.5 * self.delta).mul_scalar(self.delta)
        return quad.mask_where(r.greater_elem(self.delta), lin)


@config
class SmoothL1LossConfig:
    """Config of `SmoothL1Loss`."""

    beta: float = 1.0

    def init(self, device=None) -> SmoothL1Loss:
        return SmoothL1Loss(beta=self.beta)


class SmoothL1Loss(Module):
    """0.5 r^2 / beta if |r| < beta else |r| - 0.5 beta."""

    beta: float = 1.0

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction = Reduction.Mean
    ) -> Tensor:
        return reduce(self.forward_no_reduction(predictions, targets), reduction)

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        r = predictions.sub(targets).abs()
        if self.beta == 0:
            return r
        quad = r.square().mul_scalar(0.5 / self.beta)
        return quad.mask_where(r.greater_equal_elem(self.beta), r.sub_scalar(0.5 * self.beta))


@config
class KLDivLossConfig:
    """Config of `KLDivLoss`."""

    log_target: bool = False

    def init(self, device=None) -> KLDivLoss:
        return KLDivLoss(log_target=self.log_target)


class KLDivLoss(Module):
    """KL(target || input) with `input` given as log-probabilities:
    `t (log t - input)` (0 where t = 0), or `exp(t) (t - input)` with `log_target`."""

    log_target: bool = False

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction = Reduction.Mean
    ) -> Tensor:
        return reduce(self.forward_no_reduction(predictions, targets), reduction)

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        if self.log_target:
            return targets.exp().mul(targets.sub(predictions))
        zero = targets.lower_equal_elem(0.0)
        logt = targets.mask_fill(zero, 1.0).log()
        return targets.mul(logt.sub(predictions)).mask_fill(zero, 0.0)
