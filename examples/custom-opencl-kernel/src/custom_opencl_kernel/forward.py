"""The fused kernel on OpenCl: template, kernel type, and the launch (the book's "Forward Kernel").

`FusedMatmulAddRelu` plays the book's `DynamicKernel` struct: it fills `kernel.cl`'s template
with the element type and work-group size and names itself for the compile cache.
`fused_matmul_add_relu` is the book's `impl Backend for Wgpu`: make the inputs contiguous, build
the output and the info buffer, and queue the kernel over (rows, cols, batches) work-groups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources

from burn_opencl import (
    ClArray,
    SourceTemplate,
    WorkGroup,
    build_info,
    empty,
    execute,
    info_buffer,
    into_contiguous,
)
from burn_tensor import Float, Tensor

_ELEM = {"float32": "float", "float64": "double"}


def _template() -> SourceTemplate:
    """The kernel source (kernel.cl), read once per call of `source_template`."""
    text = resources.files(__package__).joinpath("kernel.cl").read_text()
    return SourceTemplate(text)


@dataclass(frozen=True)
class FusedMatmulAddRelu:
    """Our kernel type: work-group size and element type decide the compiled source.

    Example:
        >>> k = FusedMatmulAddRelu(16, 16, "float")
        >>> "float" in k.source_template().complete()
        True
    """

    workgroup_size_x: int
    workgroup_size_y: int
    elem: str

    def source_template(self) -> SourceTemplate:
        return (
            _template()
            .register("workgroup_size_x", self.workgroup_size_x)
            .register("workgroup_size_y", self.workgroup_size_y)
            .register("elem", self.elem)
        )

    def id(self) -> str:
        return repr(self)

    def workgroup_size(self) -> tuple[int, int, int]:
        return (self.workgroup_size_x, self.workgroup_size_y, 1)


def fused_matmul_add_relu_primitive(lhs: ClArray, rhs: ClArray, bias: ClArray) -> ClArray:
    """relu(lhs @ rhs + bias) on OpenCl primitives with one kernel launch.

    Shapes: lhs [..., m, k], rhs [..., k, n], bias broadcastable to [..., m, n] (same rank);
    batch dims broadcast over size 1. Returns a new contiguous [..., m, n].
    """
    # Define workgroup size, hardcoded for simplicity.
    workgroup_size_x = 16
    workgroup_size_y = 16
    if not (lhs.rt is rhs.rt is bias.rt):
        raise ValueError("fused_matmul_add_relu: lhs, rhs and bias must be on one device")
    if not (lhs.ndim == rhs.ndim == bias.ndim) or lhs.ndim < 2:
        raise ValueError(
            "fused_matmul_add_relu: lhs, rhs and bias need one rank >= 2, got "
            f"{list(lhs.shape)}, {list(rhs.shape)}, {list(bias.shape)}"
        )
    if lhs.shape[-1] != rhs.shape[-2]:
        raise ValueError(
            f"fused_matmul_add_relu: lhs {list(lhs.shape)} @ rhs {list(rhs.shape)}: inner dims differ"
        )

    # For simplicity, make sure each tensor is contiguous.
    lhs = into_contiguous(lhs)
    rhs = into_contiguous(rhs)

    # Get the matmul relevant shapes.
    d = lhs.ndim
    num_rows = lhs.shape[d - 2]
    num_cols = rhs.shape[d - 1]

    # Compute shape of output, while tracking number of batches.
    shape_out = [max(a, b) for a, b in zip(lhs.shape[:-2], rhs.shape[:-2])] + [num_rows, num_cols]
    num_batches = math.prod(shape_out[:-2])

    # The kernel reads bias at the output's index: broadcast it to the output shape.
    bias = into_contiguous(bias.expand(tuple(shape_out)))

    # Create the output tensor primitive (pooled device memory).
    output = empty(lhs, shape_out)

    # Create the kernel.
    kernel = FusedMatmulAddRelu(workgroup_size_x, workgroup_size_y, _ELEM[lhs.dtype.name])

    # Build info buffer with tensor information needed by the kernel, such as shapes and strides.
    info = info_buffer(lhs, build_info([lhs, rhs, output]))

    # Declare the work-groups in x, y and z.
    blocks_needed_in_x = math.ceil(num_rows / workgroup_size_x)
    blocks_needed_in_y = math.ceil(num_cols / workgroup_size_y)
    workgroup = WorkGroup(blocks_needed_in_x, blocks_needed_in_y, num_batches)

    # Queue the kernel with the launch information and the given buffers (asynchronous).
    execute(kernel, workgroup, [lhs, rhs, bias, output, info])

    # Return the output tensor.
    return output


def fused_matmul_add_relu(lhs: Tensor, rhs: Tensor, bias: Tensor) -> Tensor:
    """The fused forward on OpenCl Tensors (no autodiff; see `matmul_add_relu_custom`)."""
    out = fused_matmul_add_relu_primitive(
        lhs.into_primitive(), rhs.into_primitive(), bias.into_primitive()
    )
    return Tensor.from_primitive(out, Float, lhs.device)
