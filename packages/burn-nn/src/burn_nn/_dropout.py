"""`Dropout` and `Embedding`."""

from __future__ import annotations

from burn_tensor import Tensor
from burn_tensor import module as F

from ._config import config
from ._initializer import Initializer, Normal
from ._module import Module
from ._param import Param
from ._util import check_initializer, check_sizes, device_or_default, is_training


@config
class DropoutConfig:
    """Config of `Dropout` (no device needed: `DropoutConfig(0.5).init()`)."""

    prob: float

    def init(self, device=None) -> Dropout:
        if not 0.0 <= self.prob <= 1.0:
            raise ValueError(f"DropoutConfig: prob must be in [0, 1], got {self.prob}")
        return Dropout(prob=self.prob)


class Dropout(Module):
    """Zeroes each element with probability `prob` and scales the rest by `1 / (1 - prob)`.

    Active only when the input is on an autodiff device (training); identity otherwise, e.g.
    after `model.valid()`.

    Shapes: any -> same.

    Example:
        >>> from burn_ndarray import NdArray
        >>> x = Tensor.ones([2, 3], NdArray().device())
        >>> DropoutConfig(0.5).init().forward(x).tolist()   # not autodiff: identity
        [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    prob: float

    def forward(self, x: Tensor) -> Tensor:
        if not is_training(x) or self.prob == 0.0:
            return x
        # one backend op (`module.dropout`): Burn's `x * mask * (1 / keep)` with the mask
        # drawn from the device's bernoulli(keep), the same draws and roundings; Autodiff
        # records one node whose backward multiplies by the kept mask, and Cuda runs it in one
        # launch (three before: the draw, the scale and the multiply)
        return F.dropout(x, self.prob)


@config
class EmbeddingConfig:
    """Config of `Embedding`: weight `[n_embedding, d_model]`, initialized N(0, 1)."""

    n_embedding: int
    d_model: int
    initializer: Initializer = Normal(0.0, 1.0)

    def init(self, device=None) -> Embedding:
        device = device_or_default(device)
        check_sizes("EmbeddingConfig", n_embedding=self.n_embedding, d_model=self.d_model)
        check_initializer("EmbeddingConfig", self.initializer)
        return Embedding(weight=self.initializer.init([self.n_embedding, self.d_model], device))


class Embedding(Module):
    """Looks up rows of `weight`.

    Shapes: Int `[batch, seq]` -> `[batch, seq, d_model]`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> EmbeddingConfig(10, 4).init(d).forward(Tensor.from_ints([[1, 2, 3]], d)).dims()
        [1, 3, 4]
    """

    weight: Param

    def forward(self, indices: Tensor) -> Tensor:
        return F.embedding(self.weight.val(), indices)
