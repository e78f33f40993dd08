"""The op declarations (`burn_tensor.ops.DECLS`) and every table built from or beside them agree:
no declared op is missing from a table that must hold it, and no table holds an op that is not
declared (or is declared otherwise).

Tables checked: the contract (stubs, defaults, kind views, `op_table`, `REQUIRED_OPS`),
burn-autodiff (`TABLE`, `RULES`, `NONDIFF`, the class-level ops), burn-fusion (`OPS`,
`REDUCTIONS`, `ROUTES`), burn-gpu's expression table (`OPS`, `FUSED`), and the dispatch tables
of NdArray and OpenCl (Cuda's is built when cupy loads; its CPU stand-in tests cover it).
"""

from __future__ import annotations

import burn_autodiff
import burn_fusion
import burn_gpu
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_opencl import OpenCl
from burn_tensor import Backend, Bool, Float, Int, op_table
from burn_tensor.ops import DECLS, REQUIRED_OPS


def _names(pred) -> set[str]:
    return {n for n, d in DECLS.items() if pred(d)}


def _diff(table: set, declared: set) -> str:
    return f"missing from the table: {sorted(declared - table)}; stray: {sorted(table - declared)}"


def test_contract_is_built_from_the_declarations():
    assert op_table() == sorted(DECLS)
    assert set(REQUIRED_OPS) == _names(lambda d: d.required)
    for name, d in DECLS.items():
        fn = getattr(Backend, name)
        if d.required:
            assert getattr(fn, "__burn_required__", False), name
            assert d.default is None and d.sig, name
        else:
            assert fn is d.default, name


def test_kind_views_hold_exactly_the_declared_view_names():
    b = NdArray()
    for kind, label in ((Float, "float"), (Int, "int"), (Bool, "bool")):
        view = b.kind_ops[kind]
        names = set(vars(view)) - {"kind", "backend", "dtype", "_bool"}
        declared = {d.view for d in DECLS.values() if d.kind == label and d.view}
        assert names == declared, _diff(names, declared)


def test_autodiff_tables_agree():
    rules = _names(lambda d: d.autodiff == "rule")
    in_rules = {n for n in burn_autodiff.RULES if n in DECLS}
    assert in_rules == rules, _diff(in_rules, rules)
    # a rule under a contract-like name that is not declared is a stray table entry
    stray = [n for n in burn_autodiff.RULES if n not in DECLS and n.startswith(("float_", "int_"))]
    assert stray == []
    assert set(burn_autodiff.TABLE) == set(DECLS)
    for name, route in burn_autodiff.TABLE.items():
        assert route.how == DECLS[name].autodiff, name
        assert (route.rule is not None) == (route.how == "rule"), name
        if route.how == "default":
            assert DECLS[name].default is not None, f"{name}: decomposed without a default"
        if route.how == "special":
            assert name in vars(Autodiff), f"{name}: special but Autodiff defines no method"
    passed = _names(lambda d: d.autodiff == "pass" and d.kind == "float" and d.view)
    assert set(burn_autodiff.NONDIFF) == passed
    assert Autodiff.missing_ops() == []


def test_fusion_tables_agree():
    fused = _names(lambda d: d.fusion == "elementwise")
    assert set(burn_fusion.OPS) == fused, _diff(set(burn_fusion.OPS), fused)
    reductions = _names(lambda d: d.fusion == "reduction")
    assert set(burn_fusion.REDUCTIONS) == reductions, _diff(set(burn_fusion.REDUCTIONS), reductions)
    assert set(burn_fusion.ROUTES) == set(DECLS)
    assert burn_fusion.Fusion.missing_ops() == []
    from burn_fusion import _capture_hooks  # step capture's ops to call again at replay

    stray = sorted(set(_capture_hooks.DYNAMIC_OPS) - set(DECLS))
    assert stray == [], f"not declared ops: {stray}"


def test_gpu_expression_table_agrees():
    with_expr = {d.expr for d in DECLS.values() if d.expr}
    assert set(burn_gpu.OPS) == with_expr, _diff(set(burn_gpu.OPS), with_expr)
    fused = _names(lambda d: d.fusion == "elementwise")
    assert set(burn_gpu.FUSED) == fused, _diff(set(burn_gpu.FUSED), fused)
    assert all(DECLS[n].expr for n in fused), "an elementwise op needs an expression"


@pytest.mark.parametrize("cls", [NdArray, OpenCl], ids=lambda c: c.__name__)
def test_backend_dispatch_tables_agree(cls):
    table = set(cls.dispatch_table)
    assert table <= set(DECLS), f"stray: {sorted(table - set(DECLS))}"
    assert cls.missing_ops() == []
    for name in table:  # the class runs what its table says
        assert vars(cls)[name] is cls.dispatch_table[name], name
