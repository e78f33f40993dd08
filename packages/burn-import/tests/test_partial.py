"""Partial loading, unused keys, clear errors naming the key, loading without a target."""

from __future__ import annotations

import numpy as np
import pytest
from burn_import import (
    LoadArgs,
    PyTorchFileRecorder,
    RecordImportError,
    SafetensorsFileRecorder,
    TensorMismatchError,
    save_safetensors,
)
from burn_nn import Conv2dConfig, LayerNorm, LayerNormConfig, LinearConfig, Module
from burn_record import FullPrecisionSettings, RecordMismatchError, TensorData
from burn_tensor import Tensor


class Encoder(Module):
    """Only the first part of the generator's Mlp: loading a part of a model (the book's
    "Loading the model weights to a partial model")."""

    seq: list


class Bigger(Module):
    seq: list
    norm: LayerNorm
    head: Module


def layers(device):
    return [LinearConfig(4, 8).init(device), LinearConfig(8, 3).init(device)]


def test_partial_model_ignores_and_reports_unused(fixture_path, device, expected):
    model = Encoder(seq=layers(device))
    record, report = PyTorchFileRecorder().load_with_report(
        fixture_path("mlp.pt"), device, target=model
    )
    assert report.unused == ["norm.bias", "norm.weight"]
    assert report.loaded["seq.1.weight"] == "seq.2.weight"  # renumbered Sequential index
    assert report.adapted["seq.1.weight"] == "transposed"
    loaded = model.load_record(record)
    got = loaded.seq[0].bias.val().numpy()
    assert got.tobytes() == expected["mlp.pt::seq.0.bias"].tobytes()


def test_unused_keys_can_be_an_error(fixture_path, device):
    args = LoadArgs(fixture_path("mlp.pt")).with_error_on_unused()
    with pytest.raises(
        TensorMismatchError, match=r"unused tensors in the file: norm.bias, norm.weight"
    ):
        PyTorchFileRecorder().load(args, device, target=Encoder(seq=layers(device)))


def test_missing_keys_are_named_or_kept_when_allowed(fixture_path, device):
    model = Bigger(seq=layers(device), norm=LayerNormConfig(3).init(device),
                   head=LinearConfig(3, 2).init(device))  # fmt: skip
    with pytest.raises(TensorMismatchError) as err:
        PyTorchFileRecorder().load(fixture_path("mlp.pt"), device, target=model)
    assert err.value.problems == [
        "head.weight: missing (looked for head.weight)",
        "head.bias: missing (looked for head.bias)",
    ]
    args = LoadArgs(fixture_path("mlp.pt")).with_allow_missing()
    record, report = PyTorchFileRecorder().load_with_report(args, device, target=model)
    assert report.missing == ["head.weight", "head.bias"]
    loaded = model.load_record(record)
    assert loaded.head.weight.val().numpy().tobytes() == model.head.weight.val().numpy().tobytes()
    assert loaded.head.weight.id == model.head.weight.id


def test_shape_mismatch_names_burn_path_and_file_key(fixture_path, device):
    args = LoadArgs(fixture_path("linear.pt")).with_key_remap(r"^fc\.", "")
    with pytest.raises(TensorMismatchError) as err:
        PyTorchFileRecorder().load(args, device, target=LinearConfig(3, 4).init(device))
    assert err.value.problems == [
        (
            "weight (from fc.weight): expected shape [3, 4], got [3, 2] after transposing torch's "
            "[d_output, d_input]"
        ),
        "bias (from fc.bias): expected shape [4], got [2]",
    ]
    with pytest.raises(
        TensorMismatchError, match=r"weight \(from conv.weight\): a Linear weight must be 2-D"
    ):
        conv = LoadArgs(fixture_path("conv2d.pt")).with_key_remap(r"^conv\.", "")
        PyTorchFileRecorder().load(conv, device, target=LinearConfig(3, 4).init(device))


def test_dtype_mismatch_names_the_key(tmp_path, device):
    path = save_safetensors(
        {"weight": np.zeros((2, 3), np.int64), "bias": np.zeros(2, np.float32)}, tmp_path / "w"
    )
    with pytest.raises(TensorMismatchError) as err:
        SafetensorsFileRecorder().load(path, device, target=LinearConfig(3, 2).init(device))
    assert err.value.problems == [
        "weight (from weight): the module holds Float (float32), the file int64"
    ]


def test_without_target_tensors_come_nested_as_stored(fixture_path, device, expected):
    # The book's conv example has no Linear: the raw record fits load_record directly.
    record = PyTorchFileRecorder().load(
        LoadArgs(fixture_path("conv2d.pt")).with_key_remap(r"^conv\.", ""), device
    )
    assert set(record) == {"weight", "bias"} and isinstance(record["weight"], TensorData)
    conv = Conv2dConfig([2, 4], [3, 3]).init(device).load_record(record)
    assert conv.bias.val().numpy().tobytes() == expected["conv2d.pt::conv.bias"].tobytes()
    # A Linear needs the target to know it must be transposed: load_record says what is wrong.
    raw = PyTorchFileRecorder().load(LoadArgs(fixture_path("linear.pt")), device)
    assert list(raw["fc"]["weight"].shape) == [2, 3]
    with pytest.raises(RecordMismatchError, match=r"fc.weight: expected \[3, 2\], got \[2, 3\]"):
        Mlp_fc(fc=LinearConfig(3, 2).init(device)).load_record(raw)


class Mlp_fc(Module):
    fc: Module


def test_without_target_int_precision_is_checked(fixture_path, device):
    with pytest.raises(
        RecordImportError, match=r"dtypes.pt: i64: int tensor values in \[-9223372036854775808"
    ):
        PyTorchFileRecorder(FullPrecisionSettings).load(fixture_path("dtypes.pt"), device)


def test_top_level_key_errors_list_keys(fixture_path, device):
    args = LoadArgs(fixture_path("checkpoint.pt")).with_top_level_key("model")
    with pytest.raises(
        RecordImportError,
        match=r"no top-level key 'model'; the file has 'epoch', 'state_dict', 'optimizer', 'config'",
    ):
        PyTorchFileRecorder().load(args, device)
    args = LoadArgs(fixture_path("linear.pt")).with_top_level_key("state_dict")
    with pytest.raises(RecordImportError, match="no top-level key 'state_dict'"):
        PyTorchFileRecorder().load(args, device)


def test_remap_collisions_and_bad_regex(fixture_path, device):
    args = LoadArgs(fixture_path("linear.pt")).with_key_remap(r"^fc\.(weight|bias)$", "x")
    with pytest.raises(
        RecordImportError, match="'fc.weight' and 'fc.bias' are both remapped to 'x'"
    ):
        PyTorchFileRecorder().load(args, device)
    with pytest.raises(RecordImportError, match="invalid regex"):
        LoadArgs("x.pt").with_key_remap("(", "")


@pytest.mark.parametrize(
    ("pattern", "replacement", "key", "out"),
    [
        (r"conv\.(.*)", "$1", "conv.conv1.weight", "conv1.weight"),
        (r"(?P<layer>\w+)\.weight", "${layer}.w", "fc.weight", "fc.w"),
        (r"(\w+)\.(\w+)", "${2}_$$", "a.b", "b_$"),
        (r"(\w+)\.(\w+)", "$2_", "a.b", ""),  # Rust reads `$2_` as the group named "2_"
        (r"a", "b", "a.a", "b.a"),  # first match only, like Rust's Regex::replace
        (r"(x)?a", "[$1]", "a", "[]"),  # a group that did not take part expands to ""
        (r"^(a)", r"\1$9", "a", "a"),  # Python's \1 names group 1 too; unknown group is ""
    ],
)
def test_rust_replacement_syntax(pattern, replacement, key, out):
    from burn_import._load_args import compile_remap

    assert compile_remap(pattern, replacement)(key) == out


def test_target_must_be_a_module(fixture_path, device):
    with pytest.raises(TypeError, match="target must be a burn_nn Module"):
        PyTorchFileRecorder().load(fixture_path("linear.pt"), device, target={"fc": 1})


def test_pytorch_recorder_does_not_save(tmp_path):
    with pytest.raises(NotImplementedError, match="SafetensorsFileRecorder"):
        PyTorchFileRecorder().record({}, tmp_path / "x")


def test_no_tensors_lists_top_level_keys(tmp_path, device):
    import pickle
    import zipfile

    with zipfile.ZipFile(tmp_path / "plain.pt", "w") as z:
        z.writestr("plain/data.pkl", pickle.dumps({"epoch": 1, "name": "x"}, protocol=2))
    with pytest.raises(
        RecordImportError, match="no tensors found; top-level keys: 'epoch', 'name'"
    ):
        PyTorchFileRecorder().load(tmp_path / "plain.pt", device)


def test_tensors_only_forward_shape(fixture_path, device):
    model = Encoder(seq=layers(device)).load_record(
        PyTorchFileRecorder().load(
            fixture_path("mlp.pt"), device, target=Encoder(seq=layers(device))
        )
    )
    x = Tensor.ones([2, 4], device)
    assert model.seq[1].forward(model.seq[0].forward(x)).dims() == [2, 3]
