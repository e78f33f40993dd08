import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_record import (
    BinFileRecorder,
    CompactRecorder,
    DefaultFileRecorder,
    NamedMpkFileRecorder,
    PrettyJsonFileRecorder,
    RecordMismatchError,
)
from burn_tensor import Tensor

from burn_nn import (
    BatchNormConfig,
    Dropout,
    Linear,
    LinearConfig,
    Module,
    ModuleMapper,
    ModuleVisitor,
    Param,
    ParamId,
    Relu,
)


class Mlp(Module):
    layers: list
    head: Linear
    activation: Relu = Relu()
    scale: float = 1.0

    def forward(self, x):
        for layer in self.layers:
            x = self.activation.forward(layer.forward(x))
        return self.head.forward(x).mul_scalar(self.scale)


def make(device):
    return Mlp(
        layers=[LinearConfig(4, 8).init(device), LinearConfig(8, 8).init(device)],
        head=LinearConfig(8, 2, bias=False).init(device),
    )


def test_param_id_string_form_round_trips():
    pid = ParamId()
    assert ParamId.from_str(str(pid)) == pid and len(str(pid)) == 13
    assert str(ParamId.from_int(42)) == "5800000000000"
    assert ParamId.from_str("legacy-uuid-like") == ParamId.from_str("legacy-uuid-like")


def test_param_id_hashes_like_its_string_form():
    # ParamId == str(ParamId), so dicts and sets must agree (optimizer records are keyed by str).
    pid = ParamId()
    assert pid == str(pid) and hash(pid) == hash(str(pid))
    assert {pid: 1}.get(str(pid)) == 1 and str(pid) in {pid}
    assert hash(ParamId.from_str(str(pid))) == hash(pid)


def test_keyword_construction_and_errors(device):
    m = make(device)
    assert m.scale == 1.0 and isinstance(m.activation, Relu)
    with pytest.raises(TypeError, match="missing"):
        Mlp(layers=[])
    with pytest.raises(TypeError, match="unknown"):
        Mlp(layers=[], head=None, nope=1)


def test_named_parameters_paths_and_num_params(device):
    m = make(device)
    names = [n for n, _ in m.named_parameters()]
    assert names == [
        "layers.0.weight",
        "layers.0.bias",
        "layers.1.weight",
        "layers.1.bias",
        "head.weight",
    ]
    assert m.num_params() == 4 * 8 + 8 + 8 * 8 + 8 + 8 * 2 == 128
    assert m.forward(Tensor.ones([3, 4], device)).dims() == [3, 2]
    assert m(Tensor.ones([3, 4], device)).dims() == [3, 2]


def test_visitor_both_styles_and_paths(device):
    m = make(device)

    class Old(ModuleVisitor):
        def __init__(self):
            self.ids = []

        def visit(self, id, tensor):
            self.ids.append(id)

    class New(ModuleVisitor):
        def __init__(self):
            self.events = []

        def enter_module(self, name, ctype):
            self.events.append(("enter", name, ctype))

        def visit_float_with_path(self, path, id, tensor):
            self.events.append((".".join(path), tuple(tensor.dims())))

    assert len(m.visit(Old()).ids) == 5
    ev = m.visit(New()).events
    assert ev[:3] == [
        ("enter", "layers", "Vec"),
        ("enter", "0", "Struct:Linear"),
        ("layers.0.weight", (4, 8)),
    ]


def test_mapper_keeps_ids_and_returns_new_module(device):
    m = make(device)

    class Zero(ModuleMapper):
        def map(self, id, tensor):
            return tensor.zeros_like()

    z = m.map(Zero())
    assert [p.id for p in z.parameters()] == [p.id for p in m.parameters()]
    assert all(float(p.val().abs().sum()) == 0 for p in z.parameters())
    assert any(float(p.val().abs().sum()) > 0 for p in m.parameters())  # original untouched
    assert z.scale == m.scale and isinstance(z.activation, Relu)


def test_param_api(device):
    p = Param.from_tensor(Tensor.ones([2, 3], device))
    pid, t = p.consume()
    assert pid == p.id and t.dims() == [2, 3] and p.dims() == [2, 3]
    q = p.map(lambda v: v * 2)
    assert q.id == p.id and q.val().sum().item() == 12
    assert p.set_require_grad(False).require_grad is False


def test_devices_to_device_fork_no_grad_valid(device):
    m = make(device)
    other = NdArray(float_dtype="float64").device()
    assert m.devices() == [device]
    moved = m.to_device(other)
    assert moved.devices() == [other]
    assert [p.id for p in moved.parameters()] == [p.id for p in m.parameters()]
    assert moved.fork(device).devices() == [device]
    assert all(not p.require_grad for p in m.no_grad().parameters())
    v = m.valid()
    assert v.devices() == [device] and [p.id for p in v.parameters()] == [
        p.id for p in m.parameters()
    ]


def test_repr_tree_with_counts(device):
    text = repr(make(device))
    assert text.startswith("Mlp {") and "params: 128" in text
    assert "Linear {" in text and "params: 40" in text


def test_record_round_trip_through_recorders(device, tmp_path):
    m = make(device)
    x = Tensor.random([2, 4], device=device)
    for rec in (
        DefaultFileRecorder(),
        NamedMpkFileRecorder(),
        BinFileRecorder(),
        PrettyJsonFileRecorder(),
        CompactRecorder(),
    ):
        path = m.save_file(tmp_path / f"model-{type(rec).__name__}", rec)
        fresh = make(device).load_file(path, rec, device)
        assert [p.id for p in fresh.parameters()] == [p.id for p in m.parameters()]
        tol = 1e-2 if isinstance(rec, CompactRecorder) else 1e-6
        np.testing.assert_allclose(fresh.forward(x).numpy(), m.forward(x).numpy(), atol=tol)
        assert all(
            p.val().dtype == q.val().dtype for p, q in zip(fresh.parameters(), m.parameters())
        )


def test_record_structure_is_burns(device):
    rec = LinearConfig(2, 3, bias=False).init(device).into_record()
    assert set(rec) == {"weight", "bias"} and rec["bias"] is None
    assert isinstance(rec["weight"].id, str) and list(rec["weight"].shape) == [2, 3]


def test_load_record_names_every_problem_and_never_half_updates(device):
    m = make(device)
    rec = m.into_record()
    rec["layers"][0]["weight"] = make(device).into_record()["layers"][0]["weight"]  # valid change
    del rec["layers"][1]["bias"]
    rec["head"]["weight"] = LinearConfig(3, 3).init(device).into_record()["weight"]
    rec["extra"] = rec["head"]["bias"]
    before = [p.val().numpy().copy() for p in m.parameters()]
    with pytest.raises(RecordMismatchError) as err:
        m.load_record(rec)
    msg = str(err.value)
    assert "layers.1.bias" in msg and "head.weight" in msg and "extra" in msg
    for b, p in zip(before, m.parameters()):
        np.testing.assert_array_equal(b, p.val().numpy())


def test_running_state_is_recorded(device):
    bn = BatchNormConfig(3).init(device)
    rec = bn.into_record()
    assert set(rec) == {"gamma", "beta", "running_mean", "running_var"}
    assert bn.num_params() == 12


def test_dict_and_tuple_containers(device):
    class Heads(Module):
        heads: dict
        pair: tuple

    h = Heads(
        heads={"a": LinearConfig(2, 2).init(device)},
        pair=(LinearConfig(2, 1).init(device), Dropout(prob=0.1)),
    )
    names = [n for n, _ in h.named_parameters()]
    assert names == ["heads.a.weight", "heads.a.bias", "pair.0.weight", "pair.0.bias"]
    again = h.load_record(h.into_record())
    assert [p.id for p in again.parameters()] == [p.id for p in h.parameters()]


def test_plain_tensor_field_is_constant_not_recorded(device):
    class WithConst(Module):
        table: Tensor
        weight: Param

    w = WithConst(
        table=Tensor.ones([4], device), weight=Param.from_tensor(Tensor.ones([2], device))
    )
    assert set(w.into_record()) == {"weight"}
    other = NdArray(float_dtype="float64").device()
    assert w.to_device(other).table.device is other


def test_custom_init_with(device):
    lin = LinearConfig(3, 2).init(device)
    again = LinearConfig(3, 2).init_with(lin.into_record(), device)
    np.testing.assert_array_equal(again.weight.val().numpy(), lin.weight.val().numpy())
