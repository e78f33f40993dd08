"""save_into/load_from through BurnpackStore, SafetensorsStore and PytorchStore: filters, key
remapping, adapters, partial loads and the errors naming what is wrong."""

from pathlib import Path

import numpy as np
import pytest
from _net import DEVICE, Net, net
from burn_import import RecordImportError
from burn_nn import LayerNormConfig, LinearConfig, Relu
from burn_store import (
    BurnpackStore,
    BurnToPyTorchAdapter,
    KeyRemapper,
    PathFilter,
    PyTorchToBurnAdapter,
    PytorchStore,
    SafetensorsStore,
    StoreError,
    load_from,
    save_into,
)
from burn_tensor import Tensor

IMPORT_FIXTURES = Path(__file__).parents[2] / "burn-import" / "tests" / "fixtures"


def fresh() -> Net:
    return Net(fc=LinearConfig(2, 3).init(DEVICE), norm=LayerNormConfig(3).init(DEVICE))


def values(module) -> dict[str, np.ndarray]:
    return {k: p.val().numpy() for k, p in module.named_parameters()}


def test_burnpack_round_trip_keeps_the_target_ids(tmp_path):
    source, target = net(), fresh()
    save_into(source, BurnpackStore.from_file(tmp_path / "m.bpk"))
    result = load_from(target, BurnpackStore.from_file(tmp_path / "m.bpk"))
    assert result.applied == ["fc.weight", "fc.bias", "norm.gamma", "norm.beta"]
    assert result.missing == [] and result.unused == [] and result.is_success()
    for k, v in values(source).items():
        np.testing.assert_array_equal(values(result.module)[k], v)
    assert [p.id for _, p in result.module.named_parameters()] == [
        p.id for _, p in target.named_parameters()
    ]  # as Burn: the module's ids are kept
    assert values(target)["fc.bias"].tolist() != values(source)["fc.bias"].tolist()  # unchanged
    store = BurnpackStore.from_file(tmp_path / "m.bpk")
    assert store.file_metadata()["format"] == "burnpack"
    assert store.get_snapshot("fc.weight").param_id == 1000 and len(store.keys()) == 4


def test_filters_remaps_and_partial_loads(tmp_path):
    # save only the Linear, by a predicate on the container path
    only_fc = BurnpackStore.from_bytes(None).with_predicate(lambda path, c: c.endswith("Linear"))
    save_into(net(), only_fc)
    data = only_fc.get_bytes()
    assert BurnpackStore.from_bytes(data).keys() == ["fc.bias", "fc.weight"]
    with pytest.raises(StoreError, match=r"missing tensors \['norm.beta', 'norm.gamma'\]"):
        load_from(fresh(), BurnpackStore.from_bytes(data))
    result = load_from(fresh(), BurnpackStore.from_bytes(data).allow_partial())
    assert result.missing == [("norm.beta", "Net.LayerNorm"), ("norm.gamma", "Net.LayerNorm")]
    # remap the stored names: fc.* -> head.*, then load into a model whose field is `head`
    save_into(net(), store := BurnpackStore.from_bytes(None))
    renamed = BurnpackStore.from_bytes(store.get_bytes()).remap(
        KeyRemapper().add_pattern(r"^fc\.", "head.").add_pattern(r"^norm\.", "out.")
    )

    class Other(Net.__base__):
        head: object
        out: object

    other = Other(head=LinearConfig(2, 3).init(DEVICE), out=LayerNormConfig(3).init(DEVICE))
    result = load_from(other, renamed)
    assert sorted(result.applied) == ["head.bias", "head.weight", "out.beta", "out.gamma"]
    np.testing.assert_array_equal(result.module.head.weight.val().numpy(), values(net())["fc.weight"])
    # a load filter: the rest is skipped and keeps its values
    result = load_from(fresh(), BurnpackStore.from_bytes(store.get_bytes()).with_regex(r"^norm\."))
    assert result.skipped == ["fc.bias", "fc.weight"] and result.applied == ["norm.gamma", "norm.beta"]


def test_shape_errors_and_existing_files(tmp_path):
    save_into(net(), BurnpackStore.from_file(tmp_path / "m"))
    wrong = Net(fc=LinearConfig(2, 4).init(DEVICE), norm=LayerNormConfig(3).init(DEVICE))
    with pytest.raises(StoreError, match=r"ShapeMismatch for 'fc.weight': expected \[2, 4\], found \[2, 3\]"):
        load_from(wrong, BurnpackStore.from_file(tmp_path / "m"))
    result = load_from(wrong, BurnpackStore.from_file(tmp_path / "m").validate(False).allow_partial())
    assert [e.path for e in result.errors] == ["fc.weight", "fc.bias"]
    assert result.applied == ["norm.gamma", "norm.beta"]
    with pytest.raises(StoreError, match=r"File already exists: .*m.bpk. Use .overwrite\(True\)"):
        save_into(net(), BurnpackStore.from_file(tmp_path / "m"))
    before = (tmp_path / "m.bpk").read_bytes()
    save_into(fresh(), BurnpackStore.from_file(tmp_path / "m").overwrite())
    assert (tmp_path / "m.bpk").read_bytes() != before
    with pytest.raises(FileNotFoundError, match=r"Burnpack file not found: .*none.bpk"):
        load_from(fresh(), BurnpackStore.from_file(tmp_path / "none"))


def test_safetensors_for_pytorch_and_back(tmp_path):
    """Saved with BurnToPyTorchAdapter the file has PyTorch's names and layout; loaded with
    PyTorchToBurnAdapter it gives the model back."""
    path = tmp_path / "m.safetensors"
    save_into(net(), SafetensorsStore.from_file(path).with_to_adapter(BurnToPyTorchAdapter()))
    store = SafetensorsStore.from_file(path)
    assert sorted(store.keys()) == ["fc.bias", "fc.weight", "norm.bias", "norm.weight"]
    np.testing.assert_array_equal(
        store.get_snapshot("fc.weight").to_data().numpy(), values(net())["fc.weight"].T
    )  # [out, in]
    with pytest.raises(StoreError, match=r"ShapeMismatch for 'fc.weight': expected \[2, 3\], found \[3, 2\]"):
        load_from(fresh(), SafetensorsStore.from_file(path))  # PyTorch's layout without an adapter
    result = load_from(fresh(), SafetensorsStore.from_file(path).with_from_adapter(PyTorchToBurnAdapter()))
    for k, v in values(net()).items():
        np.testing.assert_array_equal(values(result.module)[k], v)


def test_pytorch_store_reads_a_torch_file_and_the_model_matches_torch():
    """mlp.pt (written by torch, burn-import's fixture): seq.0/seq.2 Linear and a LayerNorm; the
    loaded burn_nn model reproduces torch's output."""
    expected = np.load(IMPORT_FIXTURES / "expected.npz")

    class Mlp(Net.__base__):
        fc1: object
        fc2: object
        norm: object

        def forward(self, x):
            return self.norm.forward(self.fc2.forward(Relu().forward(self.fc1.forward(x))))

    model = Mlp(
        fc1=LinearConfig(4, 8).init(DEVICE), fc2=LinearConfig(8, 3).init(DEVICE),
        norm=LayerNormConfig(3).init(DEVICE),
    )  # fmt: skip
    store = PytorchStore.from_file(IMPORT_FIXTURES / "pt" / "mlp.pt").with_key_remapping(
        r"^seq\.0\.", "fc1."
    ).with_key_remapping(r"^seq\.2\.", "fc2.")
    result = load_from(model, store)
    assert len(result.applied) == 6 and result.unused == ["norm.bias", "norm.weight"]
    x = Tensor.from_data(expected["mlp.pt::input"], DEVICE)
    out = result.module.forward(x).numpy()
    np.testing.assert_allclose(out, expected["mlp.pt::output"], rtol=1e-5, atol=1e-6)
    with pytest.raises(RecordImportError, match=r"mlp.pt: no top-level key .state_dict.; the file has"):
        PytorchStore.from_file(IMPORT_FIXTURES / "pt" / "mlp.pt").with_top_level_key("state_dict").keys()
    with pytest.raises(StoreError, match=r"reads .pt files only"):
        save_into(model, store)


def test_path_filter_rules():
    assert not PathFilter().matches("a")  # empty: nothing
    assert PathFilter().match_all().matches("a")
    f = PathFilter().with_full_paths(["x.w"]).or_(PathFilter().with_regex(r"\.bias$"))
    assert f.matches("x.w") and f.matches("y.bias") and not f.matches("y.w")
    with pytest.raises(ValueError, match=r"invalid regex '\('"):
        PathFilter().with_regex("(")
    # every match is renamed (Rust's replace_all), not only the first
    assert KeyRemapper().add_pattern(r"\.(\d+)\.", ".l$1.").remap_path("a.0.b.1.c") == "a.l0.b.l1.c"
    with pytest.raises(ValueError, match=r"KeyRemapper: key remap: invalid regex"):
        KeyRemapper().add_pattern("(", "")
    with pytest.raises(StoreError, match=r"maps 'fc.bias' and 'fc.weight' both to 'fc'"):
        save_into(net(), s := BurnpackStore.from_bytes(None))
        BurnpackStore.from_bytes(s.get_bytes()).with_key_remapping(r"\.(bias|weight)$", "").keys()
