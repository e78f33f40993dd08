"""`conv2d_activation`: a 2-D convolution with its activation, as one backend op, so a backend
can apply the activation to each output block while it is still in cache (NdArray's native
conv and depthwise kernels) instead of a second pass over the whole output.

`activation` is a tuple: the activation op's name, then its float parameters (`ACTIVATIONS`
gives how many): `("relu",)`, `("hard_swish",)`, `("silu",)`, `("hard_sigmoid", alpha, beta)`.
The default is `conv2d` then that activation op: every backend runs it, and decorators
(autodiff, fusion) differentiate or record its two parts.
"""

from __future__ import annotations

#: activation op name -> number of float parameters it takes after the tensor
ACTIVATIONS = {"relu": 0, "hard_swish": 0, "silu": 0, "sigmoid": 0, "hard_sigmoid": 2}


class ConvActivationOps:
    """The default of `conv2d_activation` (a mixin of the backend contract)."""

    def conv2d_activation(self, x, weight, bias, options, activation):
        out = self.conv2d(x, weight, bias, options)
        return getattr(self, activation[0])(out, *activation[1:])
