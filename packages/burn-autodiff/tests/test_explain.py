"""`Autodiff(NdArray()).explain(op, *inputs)`: Autodiff's route of each class (rule, pass,
default decomposition, its own method), then the inner backend's steps."""

from __future__ import annotations

from burn_autodiff import RULES, Autodiff
from burn_ndarray import NdArray
from burn_tensor.backend import Spec

B = Autodiff(NdArray(num_threads=1))
X = Spec((2, 3), "float32")


def test_rule_then_the_inner_kernel():
    e = B.explain("float_exp", X)
    first = e.steps[0]
    assert (first.backend, first.how) == ("Autodiff(NdArray(num_threads=1))", "rule")
    code = RULES["float_exp"].backward.__code__
    assert first.where == f"burn_autodiff/_rules_math.py:{code.co_firstlineno}"
    assert "and the output" in first.why  # exp's rule keeps its output
    assert e.final.impl == "numpy.exp" and e.final.backend == "NdArray(num_threads=1)"


def test_pass_for_ops_without_gradient():
    e = B.explain("int_add", Spec((2,), "int32"), Spec((2,), "int32"))
    assert [s.how for s in e.steps] == ["pass", "kernel"]
    assert e.steps[0].impl == "burn_autodiff._wrap.passthrough"
    assert [s.how for s in B.explain("float_argmax", X, 1).steps][0] == "pass"


def test_default_decomposition_runs_on_autodiff():
    e = B.explain("float_square", X)
    assert len(e.steps) == 1
    assert e.final.how == "default"
    assert e.final.impl == "burn_tensor._ops_float.FloatOps.float_square"
    assert "recorded and differentiated" in e.final.why


def test_special_is_autodiffs_own():
    step = B.explain("float_detach", X).final
    assert (step.how, step.impl) == ("special", "burn_autodiff._backend.Autodiff.float_detach")


def test_the_class_needs_an_instance():
    import pytest

    with pytest.raises(TypeError, match=r"Autodiff\(\.\.\.\)\.explain"):
        Autodiff.explain("float_exp")


def test_an_op_declared_with_a_rule_that_has_none_is_named(monkeypatch):
    import pytest
    from burn_autodiff import TABLE, Route

    monkeypatch.setitem(TABLE, "float_exp", Route("rule", None))
    # builds: only the op without its rule refuses (a configuration no other test uses: backends
    # are interned, and this one keeps the refusing op)
    b = Autodiff(NdArray(num_threads=3, parallel_min=987_654))
    with pytest.raises(NotImplementedError, match=r"add RULES\['float_exp'\]"):
        b.float_exp(None)
    assert "lacks" in b.explain("float_exp", X).steps[0].why
