"""`Linear`: y = x W + b with W stored `[d_input, d_output]` (Burn's row layout)."""

from __future__ import annotations

import enum

from burn_tensor import Tensor
from burn_tensor import module as F

from ._config import config
from ._initializer import Initializer, KaimingUniform, Zeros
from ._module import Module
from ._param import Param
from ._util import check_enum, check_initializer, check_sizes, device_or_default


class LinearLayout(enum.Enum):
    """`Row` stores the weight `[d_input, d_output]` (default); `Col` stores `[d_output, d_input]`
    (PyTorch's layout) and transposes in `forward`."""

    Row = "Row"
    Col = "Col"


@config
class LinearConfig:
    """Config of `Linear`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> LinearConfig(784, 128).with_bias(True).init(NdArray().device()).weight.dims()
        [784, 128]
    """

    d_input: int
    d_output: int
    bias: bool = True
    initializer: Initializer = KaimingUniform()
    layout: LinearLayout = LinearLayout.Row

    def init(self, device=None) -> Linear:
        device = device_or_default(device)
        check_sizes("LinearConfig", d_input=self.d_input, d_output=self.d_output)
        check_initializer("LinearConfig", self.initializer)
        layout = check_enum("LinearConfig", "layout", self.layout, LinearLayout)
        shape = [self.d_input, self.d_output]
        if layout is LinearLayout.Col:
            shape = shape[::-1]
        fi, fo = self.d_input, self.d_output
        weight = self.initializer.init_with(shape, fi, fo, device)
        bias = self.initializer.init_with([self.d_output], fi, fo, device) if self.bias else None
        return Linear(weight=weight, bias=bias, layout=layout)

    def init_with(self, record, device=None) -> Linear:
        """Build and load `record` (the first book's `init_with`): no random init first."""
        return self.replace(initializer=Zeros()).init(device).load_record(record)


class Linear(Module):
    """Applies `x W + b`.

    Shapes: input `[..., d_input]` -> output `[..., d_output]`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> LinearConfig(4, 2).init(d).forward(Tensor.ones([8, 4], d)).dims()
        [8, 2]
    """

    weight: Param
    bias: Param | None = None
    layout: LinearLayout = LinearLayout.Row

    def forward(self, x: Tensor) -> Tensor:
        w = self.weight.val()
        if self.layout is LinearLayout.Col:
            w = w.transpose()
        return F.linear(x, w, None if self.bias is None else self.bias.val())
