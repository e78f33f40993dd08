"""The two dialects, OpenCL C and CUDA C: everything that differs between them, in one place.

A kernel template writes its body once over these names; `frame("opencl")` or `frame("cuda")`
fills them in. The element types, the pointer qualifier, the kernel head, the work-item index
and the grid-stride step, local/shared memory and its barrier, and the infinities.
"""

from __future__ import annotations

import re
from typing import NamedTuple

DIALECTS = ("opencl", "cuda")
CTYPES = {
    "opencl": {
        "float64": "double",
        "float32": "float",
        "int64": "long",
        "int32": "int",
        "int16": "short",
        "int8": "char",
        "uint8": "uchar",
        "uint16": "ushort",
        "uint32": "uint",
        "uint64": "ulong",
        "bool": "uchar",
    },
    "cuda": {
        "float64": "double",
        "float32": "float",
        "int64": "long long",
        "int32": "int",
        "int16": "short",
        "int8": "signed char",
        "uint8": "unsigned char",
        "uint16": "unsigned short",
        "uint32": "unsigned int",
        "uint64": "unsigned long long",
        "bool": "unsigned char",
    },
}


class Frame(NamedTuple):
    """What differs between the dialects, around the shared expressions."""

    ct: dict  # dtype name -> C type
    cuda: bool
    gptr: str  # pointer qualifier
    restrict: str
    gid: str  # this item's index in the whole launch
    gsize: str  # items in the whole launch (the grid-stride step)
    lid: str  # this item's index in its group
    group: str  # the group's index
    groups: str  # groups in the launch
    local: str  # qualifier of group-shared memory
    barrier: str  # group-wide barrier over shared memory
    dev: str  # qualifier of a helper function

    @property
    def name(self) -> str:
        return "cuda" if self.cuda else "opencl"

    def head(self, name: str, attrs: str = "") -> str:
        """The kernel's opening up to its parameter list."""
        return kernel_head(self, name, attrs)

    def inf(self, T: str) -> str:
        """+infinity of C type `T` (CUDA C has no INFINITY macro for double in NVRTC)."""
        if not self.cuda:
            return f"({T})INFINITY"
        if T == "double":
            return "__longlong_as_double(0x7ff0000000000000LL)"
        return "__int_as_float(0x7f800000)"

    def pragma(self, dtypes) -> str:
        """The OpenCL fp64 pragma when a double is in use (CUDA: nothing)."""
        if not self.cuda and "float64" in set(dtypes):
            return "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        return ""


_CUDA = Frame(
    CTYPES["cuda"],
    True,
    "",
    " __restrict__",
    "(blockIdx.x * blockDim.x + threadIdx.x)",
    "(blockDim.x * gridDim.x)",
    "threadIdx.x",
    "blockIdx.x",
    "gridDim.x",
    "__shared__ ",
    "__syncthreads();",
    "__device__ ",
)
_OPENCL = Frame(
    CTYPES["opencl"],
    False,
    "__global ",
    "",
    "get_global_id(0)",
    "get_global_size(0)",
    "get_local_id(0)",
    "get_group_id(0)",
    "get_num_groups(0)",
    "__local ",
    "barrier(CLK_LOCAL_MEM_FENCE);",
    "",
)


def frame(dialect: str) -> Frame:
    if dialect not in DIALECTS:
        raise ValueError(f"burn_gpu: dialect must be one of {DIALECTS}, got {dialect!r}")
    return _CUDA if dialect == "cuda" else _OPENCL


def fill(src: str, fr: Frame) -> str:
    """`src` written over dialect tokens (`@KERNEL@name(`, `@G@` before a buffer's type,
    `@GID@`, `@GSIZE@`, `@GROUP@`, `@LID@`, `@LOCAL@`, `@BARRIER@`, `@DEV@` before a helper
    function) in dialect `fr`; buffers get the dialect's restrict (no kernel of a template
    reads what it writes through another pointer)."""
    src = re.sub(r"@G@((?:const )?\w+)\* ", lambda m: f"{fr.gptr}{m.group(1)}*{fr.restrict} ", src)
    for token, value in (
        ("@KERNEL@", fr.head("")[:-1]),
        ("@GID@", fr.gid),
        ("@GSIZE@", fr.gsize),
        ("@GROUP@", fr.group),
        ("@LID@", fr.lid),
        ("@LOCAL@", fr.local),
        ("@BARRIER@", fr.barrier),
        ("@DEV@", fr.dev),
    ):
        src = src.replace(token, value)
    return src


def kernel_head(fr: Frame, name: str, attrs: str = "") -> str:
    if fr.cuda:
        return f'extern "C" __global__ void {name}('
    return f"__kernel {attrs}void {name}("
