"""The two dialects, OpenCL C and CUDA C: everything that differs between them, in one place.

A kernel template writes its body once over these names; `frame("opencl")` or `frame("cuda")`
fills them in. The element types, the pointer qualifier, the kernel head, the work-item index
and the grid-stride step, local/shared memory and its barrier, and the infinities.

Half types (`HALF`: float16, bfloat16) are storage only: a kernel loads them into float32
registers, computes in float32 and rounds once when it stores (`Frame.storage`,
`Frame.compute`, `Frame.load`, `Frame.store`, `Frame.round`; `storage_head` gives a template
`T`, `S`, `LOAD`, `STORE`). Per dialect:
- OpenCL float16: `half` buffers read with `vload_half` and written with `vstore_half_rte`
  (core OpenCL C since 1.0: no `cl_khr_fp16` needed, since nothing computes in half);
  bfloat16: `ushort` buffers and `burn_bf2f` / `burn_f2bf` (bit operations);
- CUDA: both as `unsigned short` bit patterns; float16 through the PTX conversions
  `cvt.f32.f16` / `cvt.rn.f16.f32` (inline asm), bfloat16 through the same bit operations as
  OpenCL. No `cuda_fp16.h` / `cuda_bf16.h`: NVRTC under cupy finds cupy's bundled fp16 header
  but no bf16 header without a local CUDA toolkit (cupy issue 8146), and the two must match.
float32 -> bfloat16 is round to nearest even on the dropped 16 bits, a NaN stays a quiet NaN
(ml_dtypes' bits); float32 -> float16 is IEEE round to nearest even (subnormals, overflow to
inf), as numpy's. A float64 value is rounded to float32 first (a double rounding: it can differ
from numpy's direct float64 -> half rounding in the last bit, in rare halfway cases).
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

#: the half types: storage only, float32 compute (see the module docstring)
HALF = ("float16", "bfloat16")
#: dtype name -> C storage type of a half type, per dialect
HALF_STORAGE = {
    "opencl": {"float16": "half", "bfloat16": "ushort"},
    "cuda": {"float16": "unsigned short", "bfloat16": "unsigned short"},
}
# f32 -> bf16: round to nearest even on the dropped 16 bits; a NaN stays a quiet NaN instead of
# rounding into an infinity. Written once over the dialect's bit casts (AS_U, AS_F).
_BF16 = """#ifndef BURN_BF16_CVT
#define BURN_BF16_CVT
@DEV@float burn_bf2f(const unsigned short h) { return AS_F(((unsigned int)h) << 16); }
@DEV@unsigned short burn_f2bf(const float f) {
  unsigned int u = AS_U(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}
#endif
"""
# CUDA f16 <-> f32: the PTX conversions (what cuda_fp16.h's __half2float / __float2half_rn
# compile to). The guard lets the CPU stand-in of the tests (g++, no PTX) bring its own.
_F16_CUDA = """#ifndef BURN_F16_CVT
#define BURN_F16_CVT
__device__ __forceinline__ float burn_h2f(const unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short burn_f2h(const float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
#endif
"""
# OpenCL f32 -> nearest float16 value, as a float: through a private 16-bit slot written by
# vstore_half_rte and read by vload_half (a `half` variable needs cl_khr_fp16, a pointer not).
_F16_ROUND_CL = """#ifndef BURN_F16_ROUND
#define BURN_F16_ROUND
float burn_round_h(const float f) {
  ushort bits;
  vstore_half_rte(f, 0, (__private half*)&bits);
  return vload_half(0, (const __private half*)&bits);
}
#endif
"""


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
        """The OpenCL fp64 pragma when a double is in use (CUDA: nothing), then the conversion
        helpers of the half types in `dtypes` (each guarded: twice in one source is fine)."""
        dtypes = set(dtypes)
        out = ""
        if not self.cuda and "float64" in dtypes:
            out = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        if "bfloat16" in dtypes:
            au, af = ("__float_as_uint", "__uint_as_float") if self.cuda else ("as_uint", "as_float")
            out += fill(_BF16, self).replace("AS_U", au).replace("AS_F", af)
        if "float16" in dtypes:
            out += _F16_CUDA if self.cuda else _F16_ROUND_CL
        return out

    def storage(self, dtype: str) -> str:
        """The C type of a buffer element of dtype name `dtype`."""
        if dtype in HALF:
            return HALF_STORAGE[self.name][dtype]
        return self.ct[dtype]

    def compute(self, dtype: str) -> str:
        """The C type a kernel computes `dtype` in: float for the half types, else its own."""
        return "float" if dtype in HALF else self.ct[dtype]

    def load(self, dtype: str, ptr: str, idx: str) -> str:
        """Expression: element `idx` of buffer `ptr` of `dtype`, in its compute type."""
        if dtype == "bfloat16":
            return f"burn_bf2f({ptr}[{idx}])"
        if dtype == "float16":
            return f"vload_half({idx}, {ptr})" if not self.cuda else f"burn_h2f({ptr}[{idx}])"
        return f"{ptr}[{idx}]"

    def store(self, dtype: str, ptr: str, idx: str, value: str) -> str:
        """Statement (no `;`): write compute-type `value` to element `idx` of `ptr` (a half
        type rounds to nearest even here, once)."""
        if dtype == "bfloat16":
            return f"{ptr}[{idx}] = burn_f2bf({value})"
        if dtype == "float16":
            if not self.cuda:
                return f"vstore_half_rte({value}, {idx}, {ptr})"
            return f"{ptr}[{idx}] = burn_f2h({value})"
        return f"{ptr}[{idx}] = {value}"

    def round(self, dtype: str, value: str) -> str:
        """Expression: float `value` rounded to the nearest value of half type `dtype` (still a
        float): what a value of that dtype holds between two fused ops. Other dtypes: as is."""
        if dtype == "bfloat16":
            return f"burn_bf2f(burn_f2bf({value}))"
        if dtype == "float16":
            return f"burn_h2f(burn_f2h({value}))" if self.cuda else f"burn_round_h({value})"
        return value

    def from_storage(self, dtype: str, bits: str) -> str:
        """Expression: storage element `bits` of `dtype` (a value, not a pointer) in its compute
        type (not for OpenCL float16, read only through `vload_half`)."""
        if dtype == "bfloat16":
            return f"burn_bf2f({bits})"
        if dtype == "float16" and self.cuda:
            return f"burn_h2f({bits})"
        if dtype == "float16":
            raise ValueError("burn_gpu: OpenCL float16 is read through vload_half only")
        return bits

    def to_storage(self, dtype: str, value: str) -> str:
        """Expression: compute-type `value` as a storage element of `dtype` (not for OpenCL
        float16, written only through `vstore_half`)."""
        if dtype == "bfloat16":
            return f"burn_f2bf({value})"
        if dtype == "float16" and self.cuda:
            return f"burn_f2h({value})"
        if dtype == "float16":
            raise ValueError("burn_gpu: OpenCL float16 is written through vstore_half only")
        return value


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


def storage_head(fr: Frame, dtype: str, T: str = "T", S: str = "S", suffix: str = "") -> str:
    """The typedefs and accessors a template over one element type writes its body with:
    `T` (compute type), `S` (buffer element type), `LOAD<suffix>(p, i)` (element i of buffer p
    as a T) and `STORE<suffix>(p, i, v)` (T value v written to element i, rounded once for a
    half type); the conversion helpers come with `fr.pragma`."""
    ld = fr.load(dtype, "(p)", "(i)")
    st = fr.store(dtype, "(p)", "(i)", "(v)")
    return (
        f"typedef {fr.compute(dtype)} {T};\ntypedef {fr.storage(dtype)} {S};\n"
        f"#define LOAD{suffix}(p, i) ({ld})\n#define STORE{suffix}(p, i, v) ({st})\n"
    )


def kernel_head(fr: Frame, name: str, attrs: str = "") -> str:
    if fr.cuda:
        return f'extern "C" __global__ void {name}('
    return f"__kernel {attrs}void {name}("
