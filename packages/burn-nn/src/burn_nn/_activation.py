"""Activation functions as modules (Burn's `nn::activation`); thin layers over
`burn_tensor.activation`.

Example:
    >>> from burn_ndarray import NdArray
    >>> Relu().forward(Tensor.from_data([-1.0, 2.0], NdArray().device())).tolist()
    [0.0, 2.0]
"""

from __future__ import annotations

from burn_tensor import Tensor
from burn_tensor import activation as A

from ._config import config
from ._initializer import Constant, Initializer, KaimingUniform
from ._linear import LinearConfig, LinearLayout
from ._module import Module
from ._param import Param
from ._util import device_or_default


class _Stateless(Module):
    _fn = None

    @classmethod
    def new(cls):
        return cls()

    def forward(self, x: Tensor) -> Tensor:
        return type(self)._fn(x)


def _stateless(name: str, fn, doc: str) -> type:
    cls = type(
        name,
        (_Stateless,),
        {
            "_fn": staticmethod(fn),
            "__doc__": f"{doc}\n\nShapes: any -> same.",
            "__module__": __name__,
        },
    )
    return cls


Relu = _stateless("Relu", A.relu, "max(0, x).")
Relu6 = _stateless("Relu6", A.relu6, "min(max(0, x), 6).")
Gelu = _stateless("Gelu", A.gelu, "x * Phi(x) (exact, erf-based).")
Sigmoid = _stateless("Sigmoid", A.sigmoid, "1 / (1 + exp(-x)).")
Tanh = _stateless("Tanh", A.tanh, "tanh(x).")
SiLU = _stateless("SiLU", A.silu, "x * sigmoid(x).")
Mish = _stateless("Mish", A.mish, "x * tanh(softplus(x)).")
HardSwish = _stateless("HardSwish", A.hard_swish, "x * hard_sigmoid(x, 1/6, 1/2).")
Selu = _stateless("Selu", A.selu, "scale * elu(x, alpha) with the SELU constants.")
Softsign = _stateless("Softsign", A.softsign, "x / (1 + |x|).")
LogSigmoid = _stateless("LogSigmoid", A.log_sigmoid, "log(sigmoid(x)).")
Tanhshrink = _stateless("Tanhshrink", A.tanhshrink, "x - tanh(x).")
GLU = _stateless("GLU", A.glu, "a * sigmoid(b) with a, b the halves of the last dim.")
# First-book spellings.
ReLU, GELU = Relu, Gelu


@config
class LeakyReluConfig:
    """Config of `LeakyRelu`."""

    negative_slope: float = 0.01

    def init(self, device=None) -> LeakyRelu:
        return LeakyRelu(negative_slope=self.negative_slope)


class LeakyRelu(Module):
    """max(0, x) + negative_slope * min(0, x). Shapes: any -> same."""

    negative_slope: float = 0.01

    def forward(self, x: Tensor) -> Tensor:
        return A.leaky_relu(x, self.negative_slope)


@config
class PReluConfig:
    """Config of `PRelu`: `num_parameters` learnable slopes (1, or one per channel) set to `alpha`."""

    num_parameters: int = 1
    alpha: float = 0.25

    def init(self, device=None) -> PRelu:
        alpha = Constant(self.alpha).init([self.num_parameters], device_or_default(device))
        return PRelu(alpha=alpha, alpha_value=self.alpha)


class PRelu(Module):
    """max(0, x) + alpha * min(0, x) with a learnable `alpha` (per channel along dim 1).

    Shapes: `[batch, channels, ...]` -> same.
    """

    alpha: Param
    alpha_value: float = 0.25

    def forward(self, x: Tensor) -> Tensor:
        return A.prelu(x, self.alpha.val())


@config
class HardSigmoidConfig:
    """Config of `HardSigmoid`."""

    alpha: float = 0.2
    beta: float = 0.5

    def init(self, device=None) -> HardSigmoid:
        return HardSigmoid(alpha=self.alpha, beta=self.beta)


class HardSigmoid(Module):
    """clamp(alpha * x + beta, 0, 1). Shapes: any -> same."""

    alpha: float = 0.2
    beta: float = 0.5

    def forward(self, x: Tensor) -> Tensor:
        return A.hard_sigmoid(x, self.alpha, self.beta)


@config
class SoftplusConfig:
    """Config of `Softplus`."""

    beta: float = 1.0

    def init(self, device=None) -> Softplus:
        return Softplus(beta=self.beta)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta. Shapes: any -> same."""

    beta: float = 1.0

    def forward(self, x: Tensor) -> Tensor:
        return A.softplus(x, self.beta)


@config
class SwiGluConfig:
    """Config of `SwiGlu`: two `Linear(d_input, d_output)` layers."""

    d_input: int
    d_output: int
    bias: bool = False
    initializer: Initializer = KaimingUniform()
    layout: LinearLayout = LinearLayout.Row

    def init(self, device=None) -> SwiGlu:
        lin = LinearConfig(
            self.d_input,
            self.d_output,
            bias=self.bias,
            initializer=self.initializer,
            layout=self.layout,
        )
        return SwiGlu(linear_inner=lin.init(device), linear_outer=lin.init(device))


class SwiGlu(Module):
    """silu(linear_inner(x)) * linear_outer(x).

    Shapes: `[..., d_input]` -> `[..., d_output]`.
    """

    linear_inner: Module
    linear_outer: Module

    def forward(self, x: Tensor) -> Tensor:
        return A.silu(self.linear_inner.forward(x)).mul(self.linear_outer.forward(x))


STATELESS = [
    Relu,
    Relu6,
    Gelu,
    Sigmoid,
    Tanh,
    SiLU,
    Mish,
    HardSwish,
    Selu,
    Softsign,
    LogSigmoid,
    Tanhshrink,
    GLU,
]
