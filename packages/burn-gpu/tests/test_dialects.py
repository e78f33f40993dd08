"""Every kernel template of burn_gpu rendered in both dialects, and the CUDA text checked to
differ from the OpenCL text (the one run on PoCL in `test_eager_pocl.py` and by burn-opencl's
and burn-fusion's suites) only by the dialect: the OpenCL rendering with the dialect's words
swapped (`frame("opencl")` -> `frame("cuda")`, the C type names) is the CUDA rendering."""

from __future__ import annotations

import re

import pytest
from burn_gpu import (
    CTYPES,
    FUSED,
    KERNELS,
    Node,
    Program,
    Reduction,
    cast_program,
    eager_ops,
    eager_program,
    frame,
    render,
    render_reduction,
)

DTYPES = ("float32", "float64", "int32", "int64", "int16", "int8", "uint8", "bool")
_CL, _CU = frame("opencl"), frame("cuda")
_SWAPS = [
    (f"{a}", f"{b}")
    for a, b in zip(
        (_CL.gid, _CL.gsize, _CL.lid, _CL.group, _CL.groups, _CL.local, _CL.barrier),
        (_CU.gid, _CU.gsize, _CU.lid, _CU.group, _CU.groups, _CU.local, _CU.barrier),
    )
]
_TYPES = {"long": "long long", "char": "signed char", "uchar": "unsigned char"}


def to_cuda(src: str) -> str:
    """The OpenCL text with every dialect difference swapped for CUDA's."""
    src = src.replace("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n", "")
    src = re.sub(
        r"__kernel (__attribute__\(\(\w+\([^)]*\)\)\) )?void", 'extern "C" __global__ void', src
    )
    src = re.sub(r"__global ((?:const )?[\w ]+)\* ", r"\1* __restrict__ ", src)
    for a, b in _SWAPS:
        src = src.replace(a, b)
    src = re.sub(r"\b(uchar|long|char)\b", lambda m: _TYPES[m.group(1)], src)
    src = re.sub(r"\(float\)INFINITY", "__int_as_float(0x7f800000)", src)
    src = re.sub(r"\(double\)INFINITY", "__longlong_as_double(0x7ff0000000000000LL)", src)
    # helper functions (a definition at column 0 that is not a kernel): CUDA marks them
    src = re.sub(
        r"^(?!__kernel|typedef|extern)(\w[\w ]*\b\w+\([^()]*\) \{)",
        r"__device__ \1",
        src,
        flags=re.MULTILINE,
    )
    return src


def _same_but_dialect(cl: str, cu: str) -> None:
    assert to_cuda(cl) == cu


@pytest.mark.parametrize("dt", DTYPES)
def test_eager_program_differs_only_by_dialect(dt):
    cl, cu = eager_program(dt, "opencl"), eager_program(dt, "cuda")
    names = re.findall(r"void (\w+)\(", cu)
    assert len(names) == 2 * len(eager_ops(dt)) and len(set(names)) == len(names)
    _same_but_dialect(cl, cu)


@pytest.mark.parametrize("src", ["float32", "int64", "bool"])
@pytest.mark.parametrize("dst", ["float64", "int32", "bool"])
def test_cast_program_differs_only_by_dialect(src, dst):
    _same_but_dialect(cast_program(src, dst, "opencl"), cast_program(src, dst, "cuda"))


def _one_node(op: str, dt: str, strided: bool, vec: int = 0) -> Program:
    spec = FUSED[op]
    ins = tuple(("bool", False) if k == "B" else (dt, strided) for k in spec.inputs)
    refs = tuple(-k - 1 for k in range(len(ins)))
    out = {"T": dt, "B": "bool"}.get(spec.out, "float32" if dt != "float32" else "int32")
    return Program(ins, 2 if strided else 0, (Node(op, refs, dt, out),), ((0, -1, ()),), vec)


def _dt_of(op: str) -> str:
    return "bool" if op.startswith("bool_") else "int64" if op.startswith("int_") else "float64"


@pytest.mark.parametrize("op", sorted(FUSED))
def test_every_fused_op_renders_in_both_dialects(op):
    dt = _dt_of(op)
    for strided in (False, True):
        prog = _one_node(op, dt, strided)
        (cl, name), (cu, name2) = render(prog, "opencl"), render(prog, "cuda")
        assert name == name2 and f" {name}(" in cl and f" {name}(" in cu
        _same_but_dialect(cl, cu)
    assert render(_one_node(op, dt, False, vec=4), "cuda")[1]  # the vector form renders too


@pytest.mark.parametrize("kind", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_row_kernels_render_in_both_dialects(kind, dt):
    nodes = (
        Node("float_exp", (-1,), dt, dt),
        Node(kind, (0,), dt, dt),
        Node("float_div", (0, 1), dt, dt),
    )
    prog = Program(((dt, False),), 0, nodes, ((1, -1, ()), (2, -1, ())))
    red = Reduction(prog, 64)
    (cl, _), (cu, _) = render_reduction(red, "opencl"), render_reduction(red, "cuda")
    assert "__local" in cl and "__shared__" in cu
    _same_but_dialect(cl, cu)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64"])
def test_reduce_program_differs_only_by_dialect(dt):
    from burn_gpu import reduce_program

    cl, cu = reduce_program(dt, "int64", 64, "opencl"), reduce_program(dt, "int64", 64, "cuda")
    assert len(re.findall(r"__global__ void (\w+)\(", cu)) == 16
    _same_but_dialect(cl, cu)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "bfloat16", "float16"])
def test_col_program_differs_only_by_dialect(dt):
    from burn_gpu import col_program

    cl, cu = col_program(dt, 256, "opencl"), col_program(dt, 256, "cuda")
    names = re.findall(r"__global__ void (\w+)\(", cu)
    assert names == [f"{op}_cols{fin}" for op in ("sum", "max", "min") for fin in ("", "_fin")]
    if dt not in ("bfloat16", "float16"):  # half helpers differ by more than the words
        _same_but_dialect(cl, cu)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_pool_program_differs_only_by_dialect(dt):
    from burn_gpu import pool_program

    cl, cu = pool_program(dt, "int64", "opencl"), pool_program(dt, "int64", "cuda")
    assert len(re.findall(r"__global__ void (\w+)\(", cu)) == 6
    _same_but_dialect(cl, cu)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_softmax_program_differs_only_by_dialect(dt):
    """The four kernels are one text; only the group reduction helper is per dialect."""
    from burn_gpu import softmax_program

    cl, cu = softmax_program(dt, "opencl"), softmax_program(dt, "cuda")
    assert len(re.findall(r"__global__ void (\w+)\(", cu)) == 4
    assert "__shfl_xor_sync" in cu and "__local T* red" in cl
    body = lambda src: src.split("#define RED_SIZE")[1].split("\n", 1)[1]
    _same_but_dialect(body(cl), body(cu))


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_layer_norm_programs_differ_only_by_dialect(dt):
    """layer_norm_rows and the three backward kernels are one text each; only the group
    reduction helper is per dialect. CUDA adds the warp-per-row forms of the two row kernels,
    made from the same text (`_norm.warp_rows`): warp shuffles, no shared memory, a `rows`
    bound."""
    from burn_gpu import layer_norm_bwd_program, layer_norm_program

    body = lambda src: src.split("#define RED_SIZE")[1].split("\n", 1)[1]
    for program, names, warp in (
        (layer_norm_program, ["layer_norm_rows"], "layer_norm_rows"),
        (layer_norm_bwd_program, ["layer_norm_bwd_rows", "layer_norm_bwd_part",
                                  "layer_norm_bwd_cols"], "layer_norm_bwd_rows"),  # fmt: skip
    ):
        cl, cu = program(dt, "opencl"), program(dt, "cuda")
        assert re.findall(r"__global__ void (\w+)\(", cu) == [*names, warp + "_w"]
        assert "__shfl_xor_sync" in cu and "__local T* red" in cl
        shared, w = cu.split(f'extern "C" __global__ void {warp}_w(')
        _same_but_dialect(body(cl), body(shared))
        assert "const L rows) {" in w and "if (ROW_OF_WARP >= rows) return;" in w
        assert "warp_red(" in w and "group_red(" not in w and "red[" not in w


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_rnn_program_differs_only_by_dialect(dt):
    """`rnn_steps` is one text; only the group size's spelling (`LSIZE`) is per dialect."""
    from burn_gpu import rnn_program

    cl, cu = rnn_program(dt, "opencl"), rnn_program(dt, "cuda")
    assert re.findall(r"__global__ void (\w+)\(", cu) == ["rnn_steps"]
    assert "__shared__ T hl[HMAX]" in cu and "__local T hl[HMAX]" in cl
    body = lambda src: src.split("#define LSIZE")[1].split("\n", 1)[1]
    _same_but_dialect(body(cl), body(cu))


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_adam_program_differs_only_by_dialect(dt):
    from burn_gpu import adam_many_program, adam_program

    cl, cu = adam_program(dt, "opencl"), adam_program(dt, "cuda")
    assert re.findall(r"__global__ void (\w+)\(", cu) == ["adam_update"]
    _same_but_dialect(cl, cu)
    # the multi-tensor kernel (CUDA only) computes an element with the same text
    step = cu.split("{", 2)[2].rsplit("}", 2)[0]
    assert step in adam_many_program(dt, 32)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64"])
def test_index_program_differs_only_by_dialect(dt):
    """gather / scatter_sum / stable_rank / segment_add / scatter_add are one text; only
    `add_at` is per dialect."""
    from burn_gpu import index_program

    cl, cu = index_program(dt, "int32", "opencl", True), index_program(dt, "int32", "cuda", True)
    names = re.findall(r"__global__ void (\w+)\(", cu)
    assert names == ["gather", "scatter_sum", "stable_rank", "segment_add", "scatter_add"]
    # drop the pragmas before the typedefs and each dialect's add_at definition
    cl_body = re.sub(r"(?s)void add_at\(.*?\n}\n", "", cl[cl.index("typedef") :])
    cu_body = re.sub(r"__device__ __forceinline__ void add_at\(.*?\n", "", cu)
    _same_but_dialect(cl_body, cu_body)
    assert "atomicAdd" in cu and ("atomic" in cl or "atom_" in cl)


@pytest.mark.parametrize("wide", [False, True])
def test_conv_program_differs_only_by_dialect(wide):
    from burn_gpu import conv_program

    cl, cu = conv_program("float64", "opencl", wide), conv_program("float64", "cuda", wide)
    names = re.findall(r"__global__ void (\w+)\(", cu)
    assert names == ["im2col", "im2col_rows", "col2im", "interpolate"]
    _same_but_dialect(cl, cu)


@pytest.mark.parametrize("wide", [False, True])
def test_fill_program_differs_only_by_dialect(wide):
    from burn_gpu import fill_program

    cl, cu = fill_program("float64", "opencl", wide), fill_program("float64", "cuda", wide)
    assert re.findall(r"__global__ void (\w+)\(", cu) == ["fill", "bias_add"]
    assert ("typedef long long X;" if wide else "typedef int X;") in cu
    _same_but_dialect(cl, cu)
    # the fill value: a double in CUDA (the launcher's slot), the element type in OpenCL
    assert "typedef double V;" in fill_program("float32", "cuda")
    assert "typedef float V;" in fill_program("float32", "opencl")


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_fft_program_differs_only_by_dialect(dt):
    from burn_gpu import FFT_KERNELS, fft_program

    cl, cu = fft_program(dt, "opencl"), fft_program(dt, "cuda")
    assert tuple(re.findall(r"__global__ void (\w+)\(", cu)) == FFT_KERNELS
    _same_but_dialect(cl, cu)


def test_every_kernel_of_the_table_is_rendered_somewhere():
    """Each entry of the expression table is an eager kernel of its kind, and every fusable
    one is also a Fusion node: nothing in the table goes untested by the files above."""
    eager = {(k, n) for k in KERNELS for n in KERNELS[k]}
    assert sum(len(eager_ops(dt)) for dt in ("float32", "int32", "bool")) + sum(
        1 for k in KERNELS for n, op in KERNELS[k].items() if op.out == "D"
    ) == len(eager)
    assert set(CTYPES["opencl"]) == set(CTYPES["cuda"])


def test_cuda_renderings_compile_with_nvcc(tmp_path):
    """The CUDA text of every eager program, a cast and the Philox kernel through `nvcc --ptx`
    (NVRTC on the GPU takes the same CUDA C); skipped where nvcc is missing."""
    import shutil
    import subprocess

    from burn_gpu import (
        adam_many_program,
        adam_program,
        col_program,
        conv_program,
        fill_program,
        index_program,
        layer_norm_bwd_program,
        layer_norm_program,
        pool_program,
        random_program,
        reduce_program,
        rnn_program,
        softmax_program,
    )

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed here")
    sources = {dt: eager_program(dt, "cuda") for dt in ("float32", "float64", "int64", "bool")}
    sources["cast"] = cast_program("float32", "bool", "cuda")
    sources["random_f32"] = random_program("float32", "cuda")
    sources["random_i64"] = random_program("int64", "cuda", f64=True)
    sources["reduce_f64"] = reduce_program("float64", "int64", 256, "cuda")
    sources["cols_f32"] = col_program("float32", 256, "cuda")
    sources["cols_bf16"] = col_program("bfloat16", 256, "cuda")
    sources["pool_f32"] = pool_program("float32", "int32", "cuda")
    sources["softmax_f32"] = softmax_program("float32", "cuda")
    sources["softmax_f64"] = softmax_program("float64", "cuda")
    sources["adam_f32"] = adam_program("float32", "cuda")
    sources["conv_f32"] = conv_program("float32", "cuda")
    sources["conv_f64_wide"] = conv_program("float64", "cuda", wide=True)
    sources["index_i64"] = index_program("int64", "int32", "cuda", atomic=True)
    sources["index_f64"] = index_program("float64", "int64", "cuda", atomic=True)
    sources["adam_many_f64"] = adam_many_program("float64", 32)
    sources["fill_f32"] = fill_program("float32", "cuda")
    sources["fill_f64_wide"] = fill_program("float64", "cuda", wide=True)
    sources["rnn_f32"] = rnn_program("float32", "cuda")
    sources["layer_norm_f32"] = layer_norm_program("float32", "cuda")
    sources["layer_norm_bwd_f32"] = layer_norm_bwd_program("float32", "cuda")
    sources["layer_norm_bwd_f64"] = layer_norm_bwd_program("float64", "cuda")
    failures = []
    for name, src in sources.items():
        cu = tmp_path / f"{name}.cu"
        cu.write_text(src)
        proc = subprocess.run(
            [nvcc, "--ptx", "-o", str(tmp_path / f"{name}.ptx"), str(cu)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if proc.returncode != 0:
            failures.append((name, proc.stderr[-800:]))
    assert not failures, failures
