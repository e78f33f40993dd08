"""Activation functions (Burn's `burn::tensor::activation`).

Each takes a Float tensor and returns one of the same shape, except the `*softmax*` family which
normalizes along `dim`. They dispatch to the backend's activation ops where Burn has one (so a
backend or decorator can fuse or differentiate them directly) and compose tensor ops otherwise.

Example:
    >>> from burn_tensor import Tensor, activation
    >>> activation.relu(Tensor.from_data([-1.0, 2.0])).tolist()
    [0.0, 2.0]
"""

from __future__ import annotations

import math

from . import _check as check
from ._errors import TensorCheckError
from ._tensor import Tensor


def _act(name, t, *args):
    check.float_(name, t)
    return t._like(getattr(t._d.backend, name)(t._p, *args))


def relu(t: Tensor) -> Tensor:
    return _act("relu", t)


def leaky_relu(t: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _act("leaky_relu", t, float(negative_slope))


def prelu(t: Tensor, alpha: Tensor) -> Tensor:
    """max(0, x) + alpha * min(0, x); alpha [channels] applies along dim 1 (or a scalar [1])."""
    check.float_("prelu", t)
    if alpha.rank() != 1:
        raise TensorCheckError("prelu", f"alpha must be 1-D, got {alpha.dims()}")
    if t.rank() >= 2 and alpha.dims()[0] == t.dims()[1]:
        alpha = alpha.reshape([1, -1] + [1] * (t.rank() - 2))
    elif alpha.dims()[0] == 1:
        alpha = alpha.reshape([1] * t.rank())
    else:
        raise TensorCheckError(
            "prelu", f"alpha {alpha.dims()} does not match channels of {t.dims()}"
        )
    return t._like(t._d.backend.prelu(t._p, alpha.expand(t.dims())._p))


def gelu(t: Tensor) -> Tensor:
    return _act("gelu", t)


def gelu_approximate(t: Tensor) -> Tensor:
    """tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    check.float_("gelu_approximate", t)
    inner = t.add(t.powf_scalar(3.0).mul_scalar(0.044715)).mul_scalar(math.sqrt(2.0 / math.pi))
    return t.mul_scalar(0.5).mul(inner.tanh().add_scalar(1.0))


def sigmoid(t: Tensor) -> Tensor:
    return _act("sigmoid", t)


def hard_sigmoid(t: Tensor, alpha: float = 0.2, beta: float = 0.5) -> Tensor:
    return _act("hard_sigmoid", t, float(alpha), float(beta))


def log_sigmoid(t: Tensor) -> Tensor:
    return _act("log_sigmoid", t)


def silu(t: Tensor) -> Tensor:
    """x * sigmoid(x) (the backend's `silu` op: one pass on NdArray's native kernels)."""
    return _act("silu", t)


swish = silu


def hard_swish(t: Tensor) -> Tensor:
    """x * hard_sigmoid(x, 1/6, 1/2) (the backend's `hard_swish` op: one pass on NdArray's
    native kernels)."""
    return _act("hard_swish", t)


def tanh(t: Tensor) -> Tensor:
    return t.tanh()


def softplus(t: Tensor, beta: float = 1.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, computed stably."""
    check.float_("softplus", t)
    bx = t.mul_scalar(beta)
    # log1p(exp(-|bx|)) + max(bx, 0)
    return bx.abs().neg().exp().log1p().add(bx.clamp_min(0.0)).div_scalar(beta)


def mish(t: Tensor) -> Tensor:
    """x * tanh(softplus(x))."""
    return t.mul(softplus(t).tanh())


def softmax(t: Tensor, dim: int) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along `dim` (the backend's `softmax` op: one pass per
    row where the backend has a kernel, the composition of float ops otherwise).

    Shapes: `[d...] -> [d...]`.

    Example:
        >>> from burn_tensor import Tensor, activation
        >>> [round(v, 4) for v in activation.softmax(Tensor.from_data([0.0, 1.0]), 0).tolist()]
        [0.2689, 0.7311]
    """
    check.float_("softmax", t)
    d = check.dim("softmax", dim, t.rank())
    if t._p.shape[d] == 0:
        return t  # nothing to normalise: the (empty) result, as PyTorch
    return t._like(t._d.backend.softmax(t._p, d))


def softmin(t: Tensor, dim: int) -> Tensor:
    return softmax(t.neg(), dim)


def log_softmax(t: Tensor, dim: int) -> Tensor:
    """(x - max) - log(sum(exp(x - max))) along `dim` (the backend's `log_softmax` op).

    Shapes: `[d...] -> [d...]`.
    """
    check.float_("log_softmax", t)
    d = check.dim("log_softmax", dim, t.rank())
    if t._p.shape[d] == 0:
        return t  # nothing to normalise: the (empty) result, as PyTorch
    return t._like(t._d.backend.log_softmax(t._p, d))


def quiet_softmax(t: Tensor, dim: int) -> Tensor:
    """exp(x - m) / (exp(-m) + sum exp(x - m)): softmax with an extra zero logit ("off switch")."""
    check.float_("quiet_softmax", t)
    d = check.dim("quiet_softmax", dim, t.rank())
    if t._p.shape[d] == 0:
        return t
    m = t.max_dim(d).detach()
    e = t.sub(m).exp()
    return e.div(e.sum_dim(d).add(m.neg().exp()))


def elu(t: Tensor, alpha: float = 1.0) -> Tensor:
    check.float_("elu", t)
    return t.mask_where(t.lower_equal_elem(0.0), t.exp().sub_scalar(1.0).mul_scalar(alpha))


def celu(t: Tensor, alpha: float = 1.0) -> Tensor:
    check.float_("celu", t)
    return t.mask_where(
        t.lower_equal_elem(0.0), t.div_scalar(alpha).exp().sub_scalar(1.0).mul_scalar(alpha)
    )


def selu(t: Tensor) -> Tensor:
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return elu(t, alpha).mul_scalar(scale)


def relu6(t: Tensor) -> Tensor:
    check.float_("relu6", t)
    return t.clamp(0.0, 6.0)


def hardtanh(t: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    check.float_("hardtanh", t)
    return t.clamp(min_val, max_val)


def softsign(t: Tensor) -> Tensor:
    return t.div(t.abs().add_scalar(1.0))


def tanhshrink(t: Tensor) -> Tensor:
    return t.sub(t.tanh())


def threshold(t: Tensor, threshold: float, value: float) -> Tensor:
    check.float_("threshold", t)
    return t.mask_fill(t.lower_equal_elem(threshold), value)


def glu(t: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) where a, b are the two halves along `dim`."""
    d = check.dim("glu", dim, t.rank())
    if t.dims()[d] % 2:
        raise TensorCheckError("glu", f"dim {d} size {t.dims()[d]} must be even")
    a, b = t.chunk(2, d)
    return a.mul(sigmoid(b))


__all__ = [
    "relu",
    "leaky_relu",
    "prelu",
    "gelu",
    "gelu_approximate",
    "sigmoid",
    "hard_sigmoid",
    "log_sigmoid",
    "silu",
    "swish",
    "hard_swish",
    "tanh",
    "softplus",
    "mish",
    "softmax",
    "softmin",
    "log_softmax",
    "quiet_softmax",
    "elu",
    "celu",
    "selu",
    "relu6",
    "hardtanh",
    "softsign",
    "tanhshrink",
    "threshold",
    "glu",
]
