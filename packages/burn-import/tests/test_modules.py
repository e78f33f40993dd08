"""Loading PyTorch weights into burn-nn modules: adapters, forward equality, Burn's options."""

from __future__ import annotations

import numpy as np
import pytest
from burn_import import LoadArgs, PyTorchFileRecorder, SafetensorsFileRecorder
from burn_nn import (
    BatchNormConfig,
    BiLstmConfig,
    Conv1dConfig,
    Conv2dConfig,
    EmbeddingConfig,
    LayerNorm,
    LayerNormConfig,
    LinearConfig,
    LinearLayout,
    LstmConfig,
    Module,
)
from burn_record import (
    DoublePrecisionSettings,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    NamedMpkFileRecorder,
    ParamRecord,
)
from burn_tensor import DType, Tensor
from burn_tensor import activation as A


class Mlp(Module):
    """The generator's torch `Mlp`: Linear(4, 8), ReLU, Linear(8, 3), LayerNorm(3)."""

    seq: list
    norm: LayerNorm

    @classmethod
    def init(cls, device):
        layers = [LinearConfig(4, 8).init(device), LinearConfig(8, 3).init(device)]
        return cls(seq=layers, norm=LayerNormConfig(3).init(device))

    def forward(self, x: Tensor) -> Tensor:
        return self.norm.forward(self.seq[1].forward(A.relu(self.seq[0].forward(x))))


def load(module, name, fixture_path, device, args=None, settings=FullPrecisionSettings):
    args = args or LoadArgs(fixture_path(name))
    recorder = SafetensorsFileRecorder if name.endswith(".safetensors") else PyTorchFileRecorder
    record = recorder(settings).load(args, device, target=module)
    return module.load_record(record)


def arr(t: Tensor) -> np.ndarray:
    return t.numpy()


def test_linear_weight_is_transposed(expected, fixture_path, device):
    args = LoadArgs(fixture_path("linear.pt")).with_key_remap(r"^fc\.", "")
    model = load(LinearConfig(3, 2).init(device), "linear.pt", fixture_path, device, args)
    assert arr(model.weight.val()).tobytes() == expected["linear.pt::fc.weight"].T.copy().tobytes()
    assert arr(model.bias.val()).tobytes() == expected["linear.pt::fc.bias"].tobytes()


def test_col_layout_linear_is_not_transposed(expected, fixture_path, device):
    args = LoadArgs(fixture_path("linear.pt")).with_key_remap(r"^fc\.", "")
    linear = LinearConfig(3, 2, layout=LinearLayout.Col).init(device)
    model = load(linear, "linear.pt", fixture_path, device, args)
    assert arr(model.weight.val()).tobytes() == expected["linear.pt::fc.weight"].tobytes()


class ConvNet(Module):
    conv1: Module
    conv2: Module


def test_book_key_remap_conv2d_and_debug_print(expected, fixture_path, device, capsys):
    model = ConvNet(
        conv1=Conv2dConfig([2, 2], [2, 2]).init(device),
        conv2=Conv2dConfig([2, 2], [2, 2]).with_bias(False).init(device),
    )
    args = LoadArgs(fixture_path("key_remap.pt")).with_key_remap("conv\\.(.*)", "$1")
    model = load(model, "key_remap.pt", fixture_path, device, args.with_debug_print())
    assert (
        arr(model.conv1.weight.val()).tobytes()
        == expected["key_remap.pt::conv.conv1.weight"].tobytes()
    )
    assert (
        arr(model.conv1.bias.val()).tobytes() == expected["key_remap.pt::conv.conv1.bias"].tobytes()
    )
    assert (
        arr(model.conv2.weight.val()).tobytes()
        == expected["key_remap.pt::conv.conv2.weight"].tobytes()
    )
    out = capsys.readouterr().out
    assert out.startswith("Debug information of keys and tensor shapes:\n")
    assert (
        "Original Key: conv.conv1.bias\nRemapped Key: conv1.bias\nShape: [2]\nDtype: F32\n" in out
    )
    assert "Original Key: conv.conv2.weight\nRemapped Key: conv2.weight\nShape: [2, 2, 2, 2]" in out


def test_conv1d_and_embedding_as_they_are(expected, fixture_path, device):
    args = LoadArgs(fixture_path("conv1d.pt")).with_key_remap(r"^conv\.", "")
    conv = load(Conv1dConfig(3, 2, 2).init(device), "conv1d.pt", fixture_path, device, args)
    assert arr(conv.weight.val()).tobytes() == expected["conv1d.pt::conv.weight"].tobytes()
    args = LoadArgs(fixture_path("embedding.pt")).with_key_remap(r"^embed\.", "")
    emb = load(EmbeddingConfig(10, 4).init(device), "embedding.pt", fixture_path, device, args)
    assert arr(emb.weight.val()).tobytes() == expected["embedding.pt::embed.weight"].tobytes()


def test_batchnorm_renamed_and_forward_matches_torch_eval(expected, fixture_path, device):
    args = LoadArgs(fixture_path("batchnorm.pt")).with_key_remap(r"^norm\.", "")
    recorder = PyTorchFileRecorder(FullPrecisionSettings)
    bn = BatchNormConfig(4).init(device)
    record, report = recorder.load_with_report(args, device, target=bn)
    bn = bn.load_record(record)
    e = "batchnorm.pt::norm."
    assert arr(bn.gamma.val()).tobytes() == expected[e + "weight"].tobytes()
    assert arr(bn.beta.val()).tobytes() == expected[e + "bias"].tobytes()
    assert arr(bn.running_mean.val()).tobytes() == expected[e + "running_mean"].tobytes()
    assert arr(bn.running_var.val()).tobytes() == expected[e + "running_var"].tobytes()
    assert report.adapted == {"gamma": "renamed from weight", "beta": "renamed from bias"}
    assert report.unused == ["norm.num_batches_tracked"] and report.missing == []
    x = Tensor.from_data(expected["batchnorm.pt::input"], device)
    out = arr(bn.forward(x))  # NdArray without autodiff: inference, running statistics
    np.testing.assert_allclose(out, expected["batchnorm.pt::output"], rtol=1e-5, atol=1e-5)


def test_layernorm_renamed(expected, fixture_path, device):
    args = LoadArgs(fixture_path("layernorm.pt")).with_key_remap(r"^norm\.", "")
    ln = load(LayerNormConfig(5).init(device), "layernorm.pt", fixture_path, device, args)
    assert arr(ln.gamma.val()).tobytes() == expected["layernorm.pt::norm.weight"].tobytes()
    assert arr(ln.beta.val()).tobytes() == expected["layernorm.pt::norm.bias"].tobytes()


class LstmNet(Module):
    lstm: Module


@pytest.mark.parametrize("name", ["lstm.pt", "bilstm.pt"])
def test_lstm_gates_are_split_and_forward_matches_torch(name, expected, fixture_path, device):
    config = (LstmConfig if name == "lstm.pt" else BiLstmConfig)(3, 5, True)
    model = load(LstmNet(lstm=config.init(device)), name, fixture_path, device)
    out, _state = model.lstm.forward(Tensor.from_data(expected[f"{name}::input"], device))
    np.testing.assert_allclose(arr(out), expected[f"{name}::output"], rtol=1e-5, atol=1e-6)


def test_lstm_split_rows_bit_exact(expected, fixture_path, device):
    model = load(LstmNet(lstm=LstmConfig(3, 5, True).init(device)), "lstm.pt", fixture_path, device)
    w_ih = expected["lstm.pt::lstm.weight_ih_l0"]  # [4 * 5, 3], gates i, f, g, o
    got = arr(model.lstm.cell_gate.input_transform.weight.val())  # g, transposed to [3, 5]
    assert got.tobytes() == w_ih[10:15].T.copy().tobytes()
    b_hh = expected["lstm.pt::lstm.bias_hh_l0"]
    assert arr(model.lstm.output_gate.hidden_transform.bias.val()).tobytes() == b_hh[15:].tobytes()


@pytest.mark.parametrize("name", ["mlp.pt", "mlp_protocol4.pt", "mlp.safetensors"])
def test_mlp_noncontiguous_sequential_forward_matches_torch(name, expected, fixture_path, device):
    model = load(Mlp.init(device), name, fixture_path, device)
    ref = "mlp.pt" if name == "mlp_protocol4.pt" else name
    out = arr(model.forward(Tensor.from_data(expected[f"{ref}::input"], device)))
    np.testing.assert_allclose(out, expected[f"{ref}::output"], rtol=1e-5, atol=1e-5)


def test_checkpoint_top_level_key(expected, fixture_path, device):
    args = LoadArgs(fixture_path("checkpoint.pt")).with_top_level_key("state_dict")
    model = load(Mlp.init(device), "checkpoint.pt", fixture_path, device, args)
    want = expected["checkpoint.pt::state_dict.seq.2.weight"].T.copy()
    assert arr(model.seq[1].weight.val()).tobytes() == want.tobytes()


def test_record_keeps_module_ids_and_saves_as_burn_record(fixture_path, device, tmp_path):
    model = Mlp.init(device)
    record = PyTorchFileRecorder().load(fixture_path("mlp.pt"), device, target=model)
    assert record["seq"][0]["weight"].id == str(model.seq[0].weight.id)
    path = NamedMpkFileRecorder().record(record, tmp_path / "mlp")  # the book's option b
    again = Mlp.init(device).load_file(path, NamedMpkFileRecorder(), device)
    loaded = model.load_record(record)
    assert arr(again.seq[1].bias.val()).tobytes() == arr(loaded.seq[1].bias.val()).tobytes()


@pytest.mark.parametrize(
    ("settings", "dtype"),
    [
        (HalfPrecisionSettings, DType.F16),
        (FullPrecisionSettings, DType.F32),
        (DoublePrecisionSettings, DType.F64),
    ],
)
def test_precision_settings_set_record_dtypes(settings, dtype, expected, fixture_path, device):
    record = SafetensorsFileRecorder(settings).load(
        fixture_path("mlp_f16.safetensors"), device, target=Mlp.init(device)
    )
    leaf = record["norm"]["gamma"]
    assert isinstance(leaf, ParamRecord) and leaf.dtype is dtype
    want = expected["mlp_f16.safetensors::norm.weight"]  # f16: every wider type holds it exactly
    assert np.array_equal(leaf.value.array.astype(np.float16), want)


class TwoLayerLstm(Module):
    rnn: list


def test_multi_layer_lstm_through_a_remap(tmp_path, device):
    # torch's 2-layer LSTM keys (`weight_ih_l1`, ...) onto a list of Burn Lstms, as the README says.
    from burn_import import save_safetensors

    rng = np.random.default_rng(0)
    shapes = {"weight_ih": (20, 3), "weight_hh": (20, 5), "bias_ih": (20,), "bias_hh": (20,)}
    tensors = {}
    for layer, d_in in ((0, 3), (1, 5)):
        for name, shape in shapes.items():
            shape = (20, d_in) if name == "weight_ih" else shape
            tensors[f"rnn.{name}_l{layer}"] = rng.standard_normal(shape).astype(np.float32)
    path = save_safetensors(tensors, tmp_path / "lstm2.safetensors")
    model = TwoLayerLstm(
        rnn=[LstmConfig(3, 5, True).init(device), LstmConfig(5, 5, True).init(device)]
    )
    args = LoadArgs(path).with_key_remap(r"rnn\.(\w+)_l(\d+)", "rnn.$2.${1}_l0")
    model = model.load_record(SafetensorsFileRecorder().load(args, device, target=model))
    got = model.rnn[1].forget_gate.input_transform.weight.val().numpy()
    assert got.tobytes() == tensors["rnn.weight_ih_l1"][5:10].T.copy().tobytes()
