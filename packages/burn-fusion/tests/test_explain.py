"""`Fusion(B).explain(op, *inputs)` (B: OpenCl on PoCL here, `BURN_FUSION_TEST_INNER=cuda` on
the GPU machine): recorded and fused, fused reductions, unfusable dtypes, ops delegated to the
inner backend's kernel, and defaults run on Fusion; also under Autodiff."""

from __future__ import annotations

from _fusion_testlib import inner_backend, inner_overrides
from burn_autodiff import Autodiff
from burn_fusion import OPS, Fusion
from burn_tensor.backend import Spec

X = Spec((4, 8), "float32")


def _fusion():
    return Fusion(inner_backend())


def test_elementwise_op_is_recorded_and_fused():
    e = _fusion().explain("float_exp", X)
    assert [s.how for s in e.steps] == ["fused"]
    assert e.final.impl == f"burn_gpu.OPS['float_exp']: {OPS['float_exp'].expr}"
    assert e.final.where.startswith("burn_fusion/_op_wrappers.py:")


def test_half_dtypes_are_fused_too():
    # burn_gpu's templates store halves with float32 compute (half-gpu): every dtype of the
    # contract is in FUSABLE_DTYPES, so a float16 op is recorded like a float32 one
    b = _fusion()
    for dt in ("float16", "bfloat16"):
        e = b.explain("float_exp", Spec((4, 8), dt))
        assert [s.how for s in e.steps] == ["fused"], dt
        assert "not fusable" not in e.steps[0].why


def test_reduction_is_fused_with_its_inputs():
    e = _fusion().explain("float_sum_dim", X, 1)
    assert [s.how for s in e.steps] == ["reduction"]
    assert "Stream.reduce (sum)" in e.final.impl


def test_other_ops_are_delegated_to_the_inner_kernel():
    b = _fusion()
    e = b.explain("float_matmul", Spec((4, 8), "float32"), Spec((8, 2), "float32"))
    assert [s.how for s in e.steps] == ["delegate", "kernel"]
    assert e.steps[0].impl == "burn_fusion._op_wrappers.delegate"
    assert f"{type(b.inner).__name__}.dispatch_table" in e.final.why


def test_default_runs_on_fusion_where_the_inner_backend_has_none():
    b = _fusion()
    e = b.explain("float_max_abs", X)
    if inner_overrides(b.device(), "float_max_abs"):
        assert e.steps[0].how == "delegate"
    else:
        assert [s.how for s in e.steps] == ["default"]
        assert e.final.impl == "burn_tensor._ops_numeric.float_max_abs"
        assert "its parts fuse" in e.final.why


def test_autodiff_over_fusion():
    e = Autodiff(_fusion()).explain("float_mul", X, X)
    assert [s.how for s in e.steps] == ["rule", "fused"]
