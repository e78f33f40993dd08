"""The Burn Book's custom kernel chapter on the Cuda backend: `fused_matmul_add_relu`, one CUDA
kernel for relu(lhs @ rhs + bias) with its autodiff backward written in tensor ops.

Example:
    >>> from burn_autodiff import Autodiff
    >>> from burn_cuda import Cuda
    >>> from custom_cuda_kernel import fused_matmul_add_relu
    >>> device = Autodiff(Cuda()).device()  # doctest: +SKIP
"""

from .kernel import SOURCE, source
from .ops import backward, cuda_forward, fused_matmul_add_relu, reference

__all__ = ["SOURCE", "backward", "cuda_forward", "fused_matmul_add_relu", "reference", "source"]
