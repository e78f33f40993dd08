"""The op records (`burn_tensor.ops.DECLS`) and the registration machinery built on them:
`class X(Backend, ops=...)`, `install_ops`, `explain`'s argument handling, and the typed errors
for an undeclared op, a duplicated definition, a declaration that disagrees with the mixins."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Backend
from burn_tensor.backend import Spec, explain
from burn_tensor.ops import DECLS, ContractError, UnknownOpError, op_decl


def test_every_record_is_complete():
    for name, d in DECLS.items():
        assert d.name == name
        assert d.kind in ("float", "int", "bool")
        assert d.dtypes and d.sig, name
        assert d.autodiff in ("rule", "pass", "default", "special"), name
        assert d.fusion in ("elementwise", "reduction", None), name
        assert d.fusion != "elementwise" or d.expr == name, name
        assert d.autodiff != "default" or d.default is not None, name


def test_records_read_as_burn_names():
    add = op_decl("float_add")
    assert (add.kind, add.view, add.shape, add.required) == ("float", "add", "broadcast", True)
    assert "float64" in add.dtypes and "int32" not in add.dtypes
    band = op_decl("bitwise_and")
    assert (band.kind, band.view) == ("int", None)  # outside the kind views, as in Burn
    neg = op_decl("float_neg")
    assert not neg.required and neg.default is Backend.float_neg
    assert neg.sig == "(x)"  # a default's signature is read from its code


def test_shape_rules():
    assert op_decl("float_add").out_shape([(2, 1, 4), (1, 3, 4)]) == (2, 3, 4)
    assert op_decl("float_add").out_shape([(0, 1), (1, 3)]) == (0, 3)
    assert op_decl("float_sum_dim").out_shape([(2, 3)], [1]) == (2, 1)
    assert op_decl("float_sum").out_shape([(2, 3)]) == (1,)
    assert op_decl("float_exp").out_shape([(5,)]) == (5,)
    assert op_decl("float_matmul").out_shape([(2, 3), (3, 4)]) is None  # the op computes it


def test_unknown_op_names_the_closest():
    with pytest.raises(UnknownOpError, match=r"'float_ad' is not an op.*float_add"):
        op_decl("float_ad")
    with pytest.raises(KeyError):  # also a KeyError, as a mapping lookup
        op_decl("nope")


def _exp(x):
    return np.exp(x) + 0  # marks that this table entry ran


def test_dispatch_table_installs_and_is_explained():
    class Tabled(Backend, ops={"float_exp": staticmethod(_exp)}):
        name = "tabled"

    b = Tabled()
    assert vars(Tabled)["float_exp"] is Tabled.dispatch_table["float_exp"]
    assert b.float_exp(np.zeros(2)).tolist() == [1.0, 1.0]
    step = b.explain("float_exp", Spec((2,), "float32")).final
    assert (step.how, step.impl) == ("kernel", f"{__name__}._exp")
    assert step.where.endswith(f"test_op_decls.py:{_exp.__code__.co_firstlineno}")
    assert "Tabled.dispatch_table" in step.why
    step = b.explain("float_neg", ((2,), "float32")).final
    assert step.how == "default" and step.impl.endswith("float_neg")
    assert b.explain("float_add").final.how == "required"
    assert Backend.dispatch_table == {}  # a subclass's table is its own


def test_table_entry_for_an_undeclared_op_is_refused():
    with pytest.raises(UnknownOpError, match="float_exq"):

        class Stray(Backend, ops={"float_exq": _exp}):
            pass


def test_op_defined_in_body_and_table_is_refused():
    with pytest.raises(ContractError, match="float_exp defined both"):

        class Twice(Backend, ops={"float_exp": _exp}):
            def float_exp(self, x):
                return x


def test_install_ops_checks_each_entry():
    class Late(Backend):
        pass

    with pytest.raises(ContractError, match="not callable"):
        Late.install_ops({"float_exp": 3})
    assert "float_exp" not in vars(Late)  # nothing installed when one entry is bad
    Late.install_ops({"float_exp": _exp})
    assert dict(Late.dispatch_table) == {"float_exp": _exp}


def test_explain_arguments():
    class Tabled(Backend, ops={"float_exp": staticmethod(_exp)}):
        name = "tabled2"

    b = Tabled()
    with pytest.raises(UnknownOpError, match="float_exp"):
        b.explain("float_expp")
    with pytest.raises(TypeError, match="expected a Backend or a Device, got int"):
        explain(3, "float_exp")
    e = explain(b.device(), "float_exp", np.zeros((2, 2), np.float32))
    assert e.op == "float_exp" and e.decl is DECLS["float_exp"]
    assert str(e).splitlines()[0] == "float_exp(x) -> P"


def _generic_exp(x):
    return np.exp(x)


def test_a_table_entry_can_be_a_tier_over_another_function():
    """How a GPU backend's fast path over its general op is explained (see CONTRIBUTING.md)."""
    from burn_tensor.backend import mark_tier

    def fast(x):
        return _generic_exp(x) if x.size > 4 else np.exp(x)

    def decide(args):
        big = any(isinstance(a, Spec) and a.size > 4 for a in args)
        return ("falls back", "over 4 elements") if big else ("runs", "4 elements or fewer")

    mark_tier(fast, "fast", _generic_exp, decide)

    class Tiered(Backend, ops={"float_exp": staticmethod(fast)}):
        name = "tiered"

    b = Tiered()
    steps = b.explain("float_exp", Spec((3,), "float32")).steps
    assert [(s.how, s.why) for s in steps] == [("tier", "fast tier runs: 4 elements or fewer")]
    steps = b.explain("float_exp", Spec((9,), "float32")).steps
    assert [s.how for s in steps] == ["tier", "kernel"]
    assert steps[1].impl.endswith("._generic_exp")
    assert steps[1].why == "the function the tier above falls back to"


def test_explain_on_the_class_uses_its_default_configuration():
    class Tabled(Backend, ops={"float_exp": staticmethod(_exp)}):
        name = "tabled3"

    assert Tabled.explain("float_exp").final.impl.endswith("._exp")
    assert Tabled.explain("float_exp").final.backend == "Tabled()"

    class NeedsArg(Backend):
        def __init__(self, inner):
            super().__init__()

    with pytest.raises(TypeError, match=r"NeedsArg\(\) needs arguments.*NeedsArg\(\.\.\.\)\.explain"):
        NeedsArg.explain("float_exp")
