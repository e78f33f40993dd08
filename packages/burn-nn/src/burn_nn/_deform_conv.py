"""`DeformConv2d` and its config (Burn's `nn::conv::DeformConv2d`, torchvision's `DeformConv2d`).

Weight `[out, in / weight_groups, kh, kw]`, bias `[out]`. `forward(x, offset, mask=None)`: the
offsets (and the optional modulation mask, deformable convolution v2) come from the caller, usually
another `Conv2d` over the same input, as in Burn and torchvision.
"""

from __future__ import annotations

from burn_tensor import Tensor
from burn_tensor import module as F

from ._config import config
from ._conv import _conv_params, _padded
from ._initializer import Initializer, KaimingUniform, Zeros
from ._module import Module
from ._padding import PaddingConfig2d
from ._param import Param
from ._util import check_initializer, check_sizes, device_or_default, pair


@config
class DeformConv2dConfig:
    """Config of `DeformConv2d`: `channels=[in, out]`, `kernel_size=[kh, kw]`.

    Example:
        >>> DeformConv2dConfig([2, 4], [3, 3]).offset_groups
        1
    """

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    weight_groups: int = 1
    offset_groups: int = 1
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    bias: bool = True
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> DeformConv2d:
        device = device_or_default(device)
        c_in, c_out = pair(self.channels, 2, "channels")
        kernel = pair(self.kernel_size, 2, "kernel_size")
        stride, dilation = pair(self.stride, 2, "stride"), pair(self.dilation, 2, "dilation")
        check_sizes("DeformConv2dConfig", channels=[c_in, c_out], kernel_size=kernel,
                    stride=stride, dilation=dilation, weight_groups=self.weight_groups,
                    offset_groups=self.offset_groups)
        check_initializer("DeformConv2dConfig", self.initializer)
        gw = self.weight_groups
        if c_in % gw or c_out % gw:
            raise ValueError(f"DeformConv2dConfig: channels [{c_in}, {c_out}] must both be "
                             f"divisible by weight_groups={gw}")
        if c_in % self.offset_groups:
            raise ValueError(f"DeformConv2dConfig: channels_in {c_in} must be divisible by "
                             f"offset_groups={self.offset_groups}")
        shape = [c_out, c_in // gw, *kernel]
        w, b = _conv_params(self.initializer, shape, c_in, c_out, gw, kernel, self.bias, device)
        return DeformConv2d(weight=w, bias=b, stride=stride, kernel_size=kernel,
                            dilation=dilation, weight_groups=gw,
                            offset_groups=self.offset_groups,
                            padding=PaddingConfig2d.coerce(self.padding))

    def init_with(self, record, device=None) -> DeformConv2d:
        return self.replace(initializer=Zeros()).init(device).load_record(record)


class DeformConv2d(Module):
    """Deformable 2-D convolution.

    Shapes: x `[batch, in, h, w]`, offset `[batch, 2 * offset_groups * kh * kw, h', w']`, mask
    `[batch, offset_groups * kh * kw, h', w']` or None -> `[batch, out, h', w']` (h', w': the
    plain convolution's output size).

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> conv = DeformConv2dConfig([2, 4], [3, 3]).init(d)
        >>> conv.forward(Tensor.ones([1, 2, 5, 5], d), Tensor.zeros([1, 18, 3, 3], d)).dims()
        [1, 4, 3, 3]
    """

    weight: Param
    bias: Param | None = None
    stride: list[int] = [1, 1]
    kernel_size: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    weight_groups: int = 1
    offset_groups: int = 1
    padding: PaddingConfig2d = PaddingConfig2d.Valid

    def forward(self, x: Tensor, offset: Tensor, mask: Tensor | None = None) -> Tensor:
        x, sym = _padded(x, self.padding, self.kernel_size, self.stride, self.dilation)
        return F.deform_conv2d(
            x,
            offset,
            self.weight.val(),
            mask,
            None if self.bias is None else self.bias.val(),
            stride=self.stride,
            padding=sym,
            dilation=self.dilation,
            weight_groups=self.weight_groups,
            offset_groups=self.offset_groups,
        )
