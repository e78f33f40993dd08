"""Run-time helpers for activations with ONNX parameters, losses and RMS normalization."""

from __future__ import annotations

import math

import numpy as np
from burn_tensor import DType, Tensor, activation


def hardmax(x: Tensor, axis: int) -> Tensor:
    idx = x.argmax(axis)
    n = x.dims()[axis]
    ar = Tensor.arange(0, n, x.device).reshape([n if i == axis else 1 for i in range(x.rank())])
    return ar.cast(idx.dtype).equal(idx.expand(idx.dims()) if False else idx).float().cast(x.dtype)


def softplus(x):
    return (x.exp() + 1.0).log()


def elu(x, alpha):
    return x.mask_where(x.lower_elem(0), (x.exp() - 1.0) * alpha)


def celu(x, alpha):
    return x.clamp_min(0.0) + ((x / alpha).exp() - 1.0).clamp_max(0.0) * alpha


def selu(x, alpha, gamma):
    return elu(x, alpha) * gamma


def hard_sigmoid(x, alpha, beta):
    """clamp(x * alpha + beta, 0, 1): the backend's op (code generated before it was emitted
    directly called this helper)."""
    return activation.hard_sigmoid(x, alpha, beta)


def thresholded_relu(x, alpha):
    return x.mask_fill(x.lower_equal_elem(alpha), 0.0)


def shrink(x, bias, lambd):
    y = x.zeros_like()
    y = y.mask_where(x.lower_elem(-lambd), x + bias)
    return y.mask_where(x.greater_elem(lambd), x - bias)


def gelu(x, approximate):
    return activation.gelu_approximate(x) if approximate == "tanh" else activation.gelu(x)


def max_pair(a, b):
    return a.max_pair(b)


def min_pair(a, b):
    return a.min_pair(b)


def is_inf(x, neg, pos):
    if neg and pos:
        return x.is_inf()
    if pos:
        return x.equal_elem(math.inf)
    if neg:
        return x.equal_elem(-math.inf)
    return x.is_inf().bool_and(x.is_nan())


def ones_bool(x):
    return Tensor.from_data(np.ones(x.dims(), bool), x.device)


def scalar(x):
    return np.asarray(x.numpy()).reshape(-1)[0].item()


def nll_loss(logp, target, weight, reduction, ignore_index):
    """ONNX NegativeLogLikelihoodLoss on `[N, C, d...]` log-probabilities and `[N, d...]` targets."""
    t = target
    if ignore_index is not None:
        ign = t.equal_elem(ignore_index)
        t = t.mask_fill(ign, 0)
    picked = logp.gather(1, t.unsqueeze_dim(1).cast(DType.I64)).squeeze_dim(1)
    w = None
    if weight is not None:
        w = weight.select(0, t.reshape([-1]).cast(DType.I64)).reshape(t.dims())
    if ignore_index is not None:
        keep = ign.bool_not().float().cast(logp.dtype)
        w = keep if w is None else w * keep
    loss = -picked if w is None else -picked * w
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return total
    return total / (w.sum() if w is not None else float(loss.numel()))


def rms_norm(x, scale, axis, eps):
    ms = x * x
    for d in range(axis, x.rank()):
        ms = ms.mean_dim(d)
    return x / (ms + eps).sqrt() * scale


def cumprod(x, axis, exclusive, reverse):
    if reverse:
        x = x.flip([axis])
    if exclusive:  # shift right by one, filling with the product's identity
        n = x.dims()[axis]
        one = x.narrow(axis, 0, 1).ones_like()
        x = Tensor.cat([one, x.narrow(axis, 0, n - 1)], axis) if n > 1 else one
    y = x.cumprod(axis)
    return y.flip([axis]) if reverse else y


def dropout(x: Tensor, ratio, training):
    """ONNX Dropout in training mode (`training` true): each element is kept with probability
    1 - ratio and scaled by 1 / (1 - ratio); returns (output, mask of the kept elements).

    The mask comes from the backend's generator (its `seed`), not ONNX's `seed` attribute,
    whose random stream no other runtime reproduces either. With ratio 0, or outside training,
    the output is x and the mask all true.
    """
    from burn_tensor import Distribution

    r = 0.5 if ratio is None else float(scalar(ratio))
    if (training is not None and not bool(scalar(training))) or r == 0.0:
        return x, ones_bool(x)
    if r >= 1.0:
        return x.zeros_like(), ones_bool(x).bool_not()
    keep = x.random_like(Distribution.default()).greater_equal_elem(r)  # P(u >= r) = 1 - r
    return x.mask_fill(keep.bool_not(), 0) * (1.0 / (1.0 - r)), keep
