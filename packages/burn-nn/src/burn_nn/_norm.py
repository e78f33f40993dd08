"""Normalization layers: BatchNorm, LayerNorm, GroupNorm, InstanceNorm, RmsNorm.

Affine parameters are `gamma` (ones) and `beta` (zeros), as Burn names them.
"""

from __future__ import annotations

from burn_tensor import Tensor
from burn_tensor import module as F

from ._config import config
from ._initializer import Ones, Zeros
from ._module import Module
from ._param import Param, RunningState
from ._util import check_sizes, device_or_default, is_training


def _channel_view(t: Tensor, rank: int) -> Tensor:
    """[c] -> [1, c, 1, ...] for an input of `rank`."""
    return t.reshape([1, -1] + [1] * (rank - 2))


@config
class BatchNormConfig:
    """Config of `BatchNorm`.

    Example:
        >>> BatchNormConfig(32).momentum
        0.1
    """

    num_features: int
    epsilon: float = 1e-5
    momentum: float = 0.1

    def init(self, device=None) -> BatchNorm:
        device = device_or_default(device)
        check_sizes("BatchNormConfig", num_features=self.num_features)
        n = [self.num_features]
        return BatchNorm(
            gamma=Ones().init(n, device),
            beta=Zeros().init(n, device),
            running_mean=RunningState(None, Tensor.zeros(n, device)),
            running_var=RunningState(None, Tensor.ones(n, device)),
            momentum=self.momentum,
            epsilon=self.epsilon,
        )


class BatchNorm(Module):
    """Batch normalization over dim 1 of `[batch, channels, ...]` (1-D, 2-D, ... inputs).

    On an autodiff device (training) it normalizes with the batch statistics (biased variance) and
    updates the running ones: `running = (1 - momentum) * running + momentum * batch`. Elsewhere
    (e.g. after `valid()`) it uses the running statistics.

    Shapes: `[batch, channels, ...]` -> same.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> BatchNormConfig(3).init(d).forward(Tensor.ones([2, 3, 4, 4], d)).dims()
        [2, 3, 4, 4]
    """

    gamma: Param
    beta: Param
    running_mean: RunningState
    running_var: RunningState
    momentum: float = 0.1
    epsilon: float = 1e-5

    def forward(self, x: Tensor) -> Tensor:
        rank = x.rank()
        if rank < 2:
            raise ValueError(f"BatchNorm: expected [batch, channels, ...], got {x.dims()}")
        if is_training(x):
            c = x.dims()[1]
            flat = x.swap_dims(0, 1).reshape([c, -1])
            var, mean = flat.var_mean_bias(1)
            mean, var = mean.reshape([c]), var.reshape([c])
            m = self.momentum
            rm = self.running_mean.val().to_device(x.device).detach()
            rv = self.running_var.val().to_device(x.device).detach()
            self.running_mean.update(rm.mul_scalar(1 - m).add(mean.detach().mul_scalar(m)))
            self.running_var.update(rv.mul_scalar(1 - m).add(var.detach().mul_scalar(m)))
        else:
            mean, var = self.running_mean.val(), self.running_var.val()
        x = x.sub(_channel_view(mean, rank)).div(
            _channel_view(var.add_scalar(self.epsilon).sqrt(), rank)
        )
        return x.mul(_channel_view(self.gamma.val(), rank)).add(
            _channel_view(self.beta.val(), rank)
        )


@config
class LayerNormConfig:
    """Config of `LayerNorm` (normalizes the last dim of size `d_model`)."""

    d_model: int
    epsilon: float = 1e-5
    bias: bool = True

    def init(self, device=None) -> LayerNorm:
        device = device_or_default(device)
        check_sizes("LayerNormConfig", d_model=self.d_model)
        n = [self.d_model]
        return LayerNorm(
            gamma=Ones().init(n, device),
            beta=Zeros().init(n, device) if self.bias else None,
            epsilon=self.epsilon,
        )


class LayerNorm(Module):
    """`(x - mean) / sqrt(var + eps) * gamma + beta` over the last dim (biased variance).

    Shapes: `[..., d_model]` -> same.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> LayerNormConfig(4).init(d).forward(Tensor.ones([2, 4], d)).dims()
        [2, 4]
    """

    gamma: Param
    beta: Param | None = None
    epsilon: float = 1e-5

    def forward(self, x: Tensor) -> Tensor:
        # One backend op (one autodiff node; NdArray runs a row in one pass).
        beta = None if self.beta is None else self.beta.val()
        return F.layer_norm(x, self.gamma.val(), beta, self.epsilon)


def _group_norm(x: Tensor, groups: int, gamma, beta, eps: float) -> Tensor:
    dims = x.dims()
    if len(dims) < 2 or dims[1] % groups:
        raise ValueError(f"GroupNorm: channels of {dims} must be divisible by num_groups={groups}")
    flat = x.reshape([dims[0], groups, -1])
    var, mean = flat.var_mean_bias(2)
    out = flat.sub(mean).div(var.add_scalar(eps).sqrt()).reshape(dims)
    if gamma is not None:
        out = out.mul(_channel_view(gamma.val(), len(dims))).add(
            _channel_view(beta.val(), len(dims))
        )
    return out


@config
class GroupNormConfig:
    """Config of `GroupNorm`."""

    num_groups: int
    num_channels: int
    epsilon: float = 1e-5
    affine: bool = True

    def init(self, device=None) -> GroupNorm:
        check_sizes("GroupNormConfig", num_groups=self.num_groups, num_channels=self.num_channels)
        if self.num_channels % self.num_groups:
            raise ValueError(
                f"GroupNormConfig: num_channels={self.num_channels} must be divisible "
                f"by num_groups={self.num_groups}"
            )
        device = device_or_default(device)
        n = [self.num_channels]
        gamma = Ones().init(n, device) if self.affine else None
        beta = Zeros().init(n, device) if self.affine else None
        return GroupNorm(
            gamma=gamma,
            beta=beta,
            num_groups=self.num_groups,
            num_channels=self.num_channels,
            epsilon=self.epsilon,
            affine=self.affine,
        )


class GroupNorm(Module):
    """Normalizes each group of `num_channels / num_groups` channels of every sample.

    Shapes: `[batch, num_channels, ...]` -> same.
    """

    gamma: Param | None = None
    beta: Param | None = None
    num_groups: int = 1
    num_channels: int = 1
    epsilon: float = 1e-5
    affine: bool = True

    def forward(self, x: Tensor) -> Tensor:
        return _group_norm(x, self.num_groups, self.gamma, self.beta, self.epsilon)


@config
class InstanceNormConfig:
    """Config of `InstanceNorm`."""

    num_channels: int
    epsilon: float = 1e-5
    affine: bool = True

    def init(self, device=None) -> InstanceNorm:
        check_sizes("InstanceNormConfig", num_channels=self.num_channels)
        device = device_or_default(device)
        n = [self.num_channels]
        gamma = Ones().init(n, device) if self.affine else None
        beta = Zeros().init(n, device) if self.affine else None
        return InstanceNorm(
            gamma=gamma,
            beta=beta,
            num_channels=self.num_channels,
            epsilon=self.epsilon,
            affine=self.affine,
        )


class InstanceNorm(Module):
    """Normalizes every channel of every sample (GroupNorm with one channel per group).

    Shapes: `[batch, num_channels, ...]` -> same.
    """

    gamma: Param | None = None
    beta: Param | None = None
    num_channels: int = 1
    epsilon: float = 1e-5
    affine: bool = True

    def forward(self, x: Tensor) -> Tensor:
        return _group_norm(x, self.num_channels, self.gamma, self.beta, self.epsilon)


@config
class RmsNormConfig:
    """Config of `RmsNorm`."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device=None) -> RmsNorm:
        check_sizes("RmsNormConfig", d_model=self.d_model)
        return RmsNorm(
            gamma=Ones().init([self.d_model], device_or_default(device)), epsilon=self.epsilon
        )


class RmsNorm(Module):
    """`x / sqrt(mean(x^2) + eps) * gamma` over the last dim.

    Shapes: `[..., d_model]` -> same.
    """

    gamma: Param
    epsilon: float = 1e-5

    def forward(self, x: Tensor) -> Tensor:
        rms = x.square().mean_dim(x.rank() - 1).add_scalar(self.epsilon).sqrt()
        return x.div(rms).mul(self.gamma.val().unsqueeze(x.rank()))
