"""Module fields are checked at construction (issue 32 item 3): the PyTorch habit
`Linear(4, 16)` fails at once naming the field, the type and the config to use."""

from __future__ import annotations

import pytest
from burn_tensor import Tensor

from burn_nn import Conv2d, Linear, LinearConfig, Module, Param, Relu


def test_linear_from_sizes_names_the_config():
    with pytest.raises(TypeError) as e:
        Linear(4, 16)
    msg = str(e.value)
    assert "Linear: field 'weight' expects Param, got int (4)" in msg
    assert "LinearConfig(...).init(device)" in msg


def test_conv2d_from_sizes_names_the_config():
    with pytest.raises(TypeError, match=r"Conv2d: field 'weight' expects Param.*Conv2dConfig"):
        Conv2d(1, 8, 3)


def test_wrong_type_for_an_optional_field(device):
    lin = LinearConfig(2, 3).init(device)
    with pytest.raises(TypeError, match=r"field 'bias' expects Param \| None, got str"):
        Linear(weight=lin.weight, bias="zeros")


def test_a_config_built_module_and_a_rebuilt_one_pass(device):
    lin = LinearConfig(2, 3).init(device)
    again = Linear(weight=lin.weight, bias=lin.bias, layout=lin.layout)
    x = Tensor.ones([1, 2], device)
    assert again.forward(x).tolist() == lin.forward(x).tolist()


class _Mlp(Module):
    first: Module
    scale: float = 1.0
    steps: int = 1
    sizes: list[int] | None = None
    act: Relu = Relu()


def test_user_modules_are_checked_by_their_annotations(device):
    lin = LinearConfig(2, 2).init(device)
    assert _Mlp(first=lin, scale=2, steps=3, sizes=(1, 2)).scale == 2  # int for float is fine
    with pytest.raises(TypeError, match=r"_Mlp: field 'first' expects Module, got Tensor"):
        _Mlp(first=Tensor.ones([2], device))
    with pytest.raises(TypeError, match=r"field 'steps' expects int, got float \(1\.5\)"):
        _Mlp(first=lin, steps=1.5)
    with pytest.raises(TypeError, match=r"field 'steps' expects int, got bool"):
        _Mlp(first=lin, steps=True)
    with pytest.raises(TypeError, match=r"field 'sizes' expects list\[int\] \| None, got str"):
        _Mlp(first=lin, sizes="12")


class _Loose(Module):
    anything: "NotANameAnywhere"  # noqa: F821 - an annotation the check cannot resolve
    param: Param | None = None


def test_unreadable_annotations_are_not_judged():
    assert _Loose(anything=object()).param is None


def test_a_class_made_by_exec_is_built(device):
    # ONNX codegen execs module source under a module name that is not in sys.modules
    ns: dict = {"Module": Module, "Param": Param}
    exec(
        "class Gen(Module):\n    w: Param\n    k: int = 1\n",
        {"__name__": "_burn_onnx_gen_not_imported", **ns},
        ns,
    )
    lin = LinearConfig(1, 1).init(device)
    assert ns["Gen"](w=lin.weight, k=2).k == 2
