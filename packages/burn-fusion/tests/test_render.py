"""The renderer's two dialects as text: every fusable op, every dtype it takes, strided and
in-place inputs, compiled by the real compilers where they exist here -- `nvcc --ptx` for the
CUDA C (no GPU needed) and the OpenCL device under test for the OpenCL C."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from burn_fusion import OPS, Node, Program, Reduction, render, render_reduction

FLOATS = ("float32", "float64")
INTS = ("int32", "int64")


def _kind_dtypes(op: str):
    if op.startswith("bool_"):
        return ("bool",)
    if op.startswith("int_"):
        return INTS
    return FLOATS  # float_* and the activations


def _operand_dtype(letter: str, dt: str) -> str:
    return "bool" if letter == "B" else dt


def all_ops_program(dt: str, strided: bool = False) -> Program:
    """One kernel computing every op of `dt`'s kind from three inputs (T, bool mask, T)."""
    inputs = ((dt, strided), ("bool", False), (dt, False))
    nodes, outputs = [], []
    for op, spec in OPS.items():
        if dt not in _kind_dtypes(op) and not (dt == "bool" and op.startswith("bool_")):
            continue
        refs = tuple(
            -1 if k == "T" and i == 0 else -2 if k == "B" else -3 for i, k in enumerate(spec.inputs)
        )
        out = {"T": dt, "B": "bool"}.get(spec.out)
        if out is None:  # casts: to the other kind's first dtype
            out = (
                "float32"
                if op in ("int_into_float", "bool_into_float")
                else (
                    "int32"
                    if op in ("float_into_int", "bool_into_int")
                    else ("float64" if dt == "float32" else "float32")
                    if op == "float_cast"
                    else ("int64" if dt == "int32" else "int32")
                )
            )
        nodes.append(Node(op, refs, dt, out))
        outputs.append((len(nodes) - 1, -1, ()))
    return Program(inputs, 2 if strided else 0, tuple(nodes), tuple(outputs))


PROGRAMS = {
    "f32": all_ops_program("float32"),
    "f64": all_ops_program("float64"),
    "i32": all_ops_program("int32"),
    "i64": all_ops_program("int64"),
    "bool": all_ops_program("bool"),
    "f32-strided": all_ops_program("float32", strided=True),
    # a chain with an in-place result and a mixed-dtype operand
    "chain-in-place": Program(
        (("float32", False), ("float64", True)),
        3,
        (
            Node("float_exp", (-1,), "float32", "float32"),
            Node("float_add", (0, -2), "float32", "float32"),
            Node("float_mul_scalar", (1,), "float32", "float32"),
            Node("float_greater_elem", (2,), "float32", "bool"),
        ),
        ((2, 0, ()), (3, -1, (1,))),
    ),
}


def _vector(prog: Program) -> Program:
    return prog._replace(vec=4)


# vector variants: every dtype's 16-byte (or narrower) accesses, in place and mixed dtypes
for _key in ("f32", "f64", "i32", "i64", "bool"):
    PROGRAMS[f"{_key}-vec"] = _vector(PROGRAMS[_key])
for _key in ("f32", "f64", "bool"):
    PROGRAMS[f"{_key}-vec8"] = PROGRAMS[_key]._replace(vec=8)
PROGRAMS["mixed-vec"] = Program(
    (("float32", False), ("float64", False), ("int8", False)),
    0,
    (
        Node("float_add", (-1, -2), "float32", "float32"),
        Node("float_cast", (0,), "float32", "float64"),
        Node("int_cast", (-3,), "int8", "int16"),
        Node("float_greater_elem", (0,), "float32", "bool"),
    ),
    ((0, 0, ()), (1, -1, ()), (2, -1, ()), (3, -1, ())),
    4,
)


def _row(nodes, inputs, outputs, rank=0, local=256) -> Reduction:
    return Reduction(Program(tuple(inputs), rank, tuple(nodes), tuple(outputs)), local)


REDUCTIONS = {
    # mean of a product with a strided input (f32), and the plain partial-sums stage (f64)
    "sum-prologue": _row(
        (
            Node("float_mul", (-1, -2), "float32", "float32"),
            Node("reduce_sum", (0,), "float32", "float32"),
        ),
        (("float32", False), ("float32", True)),
        ((1, -1, ()),),
        rank=2,
    ),
    "sum-partials": _row(
        (Node("reduce_mean", (-1,), "float64", "float64"),),
        (("float64", False),),
        ((0, -1, ()),),
        local=64,
    ),
    # softmax's row kernel: exp(x - max) summed, then divided, max a [rows, 1] input
    "softmax-row": _row(
        (
            Node("float_sub", (-1, -2), "float32", "float32"),
            Node("float_exp", (0,), "float32", "float32"),
            Node("reduce_sum", (1,), "float32", "float32"),
            Node("float_div", (1, 2), "float32", "float32"),
        ),
        (("float32", False), ("float32", True)),
        ((3, -1, ()),),
        rank=2,
    ),
    # max and min of a chain, written with a broadcast [rows, 1] epilogue result (f64)
    "max-row": _row(
        (
            Node("float_exp", (-1,), "float64", "float64"),
            Node("reduce_max", (0,), "float64", "float64"),
            Node("float_add_scalar", (1,), "float64", "float64"),
            Node("float_sub", (0, 2), "float64", "float64"),
        ),
        (("float64", False),),
        ((1, -1, ()), (2, -1, (1,)), (3, 0, ())),
        rank=2,
    ),
    "min-row": _row(
        (Node("reduce_min", (-1,), "float32", "float32"),),
        (("float32", False),),
        ((0, -1, ()),),
    ),
}


def _source(key: str, dialect: str):
    if key in REDUCTIONS:
        return render_reduction(REDUCTIONS[key], dialect)
    return render(PROGRAMS[key], dialect)


def test_vector_variant_is_another_kernel():
    p = PROGRAMS["f32"]
    q = _vector(p)
    assert p != q and p.name() != q.name()
    src_cu, _ = render(q, "cuda")
    src_cl, _ = render(q, "opencl")
    assert "reinterpret_cast<const float4*>(in0)[i]" in src_cu
    assert "reinterpret_cast<const double2*>" not in src_cu
    assert "reinterpret_cast<float4*>(o12)[i] = w; }" in src_cu  # no make_float4: types only
    assert "make_" not in src_cu
    assert "vload4(i, in0)" in src_cl and "vstore4(" in src_cl
    src64, _ = render(_vector(PROGRAMS["f64"]), "cuda")  # two 16-byte halves per item
    assert "reinterpret_cast<const double2*>(in0)[2 * i + 1]" in src64
    src8, _ = render(PROGRAMS["f32-vec8"], "cuda")  # two float4 per item
    assert "reinterpret_cast<const float4*>(in0)[2 * i + 1]" in src8
    assert "vload8(i, in0)" in render(PROGRAMS["f32-vec8"], "opencl")[0]
    # no 64-byte OpenCL vectors: 8 doubles are two double4 (test_vec8_twice.py says why)
    src_cl8, _ = render(PROGRAMS["f64-vec8"], "opencl")
    assert "double8" not in src_cl8 and "long8" not in src_cl8
    assert "vload4(2 * i + 1, in0)" in src_cl8 and "vstore4(" in src_cl8
    assert "double8" not in render(PROGRAMS["f32-vec8"], "opencl")[0]  # its float64 cast
    with pytest.raises(ValueError, match="vector kernel"):
        render(_vector(PROGRAMS["f32-strided"]), "cuda")
    with pytest.raises(ValueError, match="vector kernel"):
        render(PROGRAMS["f32"]._replace(vec=2), "opencl")


def test_every_op_is_rendered():
    covered = {n.op for p in PROGRAMS.values() for n in p.nodes}
    assert covered == set(OPS)


def test_plan_key_ignores_nothing_structural():
    p = PROGRAMS["chain-in-place"]
    q = p._replace(outputs=((2, -1, ()), (3, -1, (1,))))
    assert p != q and p.name() != q.name()
    assert render(p, "cuda")[0] != render(q, "cuda")[0]


def test_dialects_differ_only_in_the_frame():
    src_cl, name = render(PROGRAMS["chain-in-place"], "opencl")
    src_cu, name2 = render(PROGRAMS["chain-in-place"], "cuda")
    assert name == name2
    assert "__kernel void" in src_cl and "get_global_id(0)" in src_cl
    assert 'extern "C" __global__ void' in src_cu and "blockIdx.x" in src_cu
    # the in-place input is writable, the others const
    assert "__global float* in0" in src_cl and "__global const double* in1" in src_cl
    assert "in0[i] = v2;" in src_cu


NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here")
@pytest.mark.parametrize("key", [*PROGRAMS, *REDUCTIONS])
def test_cuda_source_compiles_to_ptx(tmp_path, key):
    src, name = _source(key, "cuda")
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    res = subprocess.run(
        [NVCC, "--ptx", "-std=c++14", "-o", str(tmp_path / "k.ptx"), str(cu)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr + "\n" + src
    assert f".entry {name}" in (tmp_path / "k.ptx").read_text()


@pytest.mark.parametrize("key", [*PROGRAMS, *REDUCTIONS])
def test_opencl_source_builds_on_the_device_under_test(key):
    from _fusion_testlib import INNER

    if INNER != "opencl":
        pytest.skip("the OpenCL build runs with the OpenCL inner backend")
    import pyopencl as cl
    from _fusion_testlib import inner_backend

    f64 = ("f64", "i64", "chain-in-place", "sum-partials", "max-row", "mixed-vec")
    config = "f64-i64" if key.split("-vec")[0] in f64 else "f32-i32"
    rt = inner_backend(config)._rt(None)
    src, name = _source(key, "opencl")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prg = cl.Program(rt.ctx, src).build()
        cl.Kernel(prg, name)
