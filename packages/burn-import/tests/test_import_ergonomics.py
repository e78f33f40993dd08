"""Import ergonomics (issue 32 item 10): a record read without `target=` says how to fix the
transposed Linear weight it holds; key remaps accept Python's group syntax as well as Rust's."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_nn import LinearConfig
from burn_record import FullPrecisionSettings, RecordMismatchError

from burn_import import LoadArgs, PyTorchFileRecorder
from burn_import._load_args import compile_remap

PT = pathlib.Path(__file__).parent / "fixtures/pt/linear.pt"


def test_record_without_target_names_target_in_the_error():
    device = NdArray().device()
    model = LinearConfig(3, 2).init(device)
    args = LoadArgs(PT).with_key_remap(r"^fc\.", "")
    record = PyTorchFileRecorder(FullPrecisionSettings).load(args, device)
    with pytest.raises(RecordMismatchError) as e:
        model.load_record(record)
    assert "weight: expected [3, 2], got [2, 3]" in str(e.value)
    assert "target=model" in str(e.value)
    # the advice works: the same file with target= loads and is torch's weight transposed
    fixed = PyTorchFileRecorder(FullPrecisionSettings).load(args, device, target=model)
    loaded = model.load_record(fixed)
    np.testing.assert_array_equal(
        loaded.weight.val().numpy(), record["weight"].numpy().T
    )


def test_square_or_unrelated_shapes_get_no_transpose_hint():
    err = RecordMismatchError([], [], [("a", (3, 3), (2, 2)), ("b", (2, 3, 4), (4, 3, 2))])
    assert "hint" not in str(err)


# (`$1_x` would name a group "1_x" in Rust, as Burn reads it: braces are needed there)
@pytest.mark.parametrize("replacement", [r"\1_x.\2", r"\g<1>_x.\g<2>", "${1}_x.${2}"])
def test_python_and_rust_group_syntax_agree(replacement):
    remap = compile_remap(r"^conv\.(\w+)\.(.*)", replacement)
    assert remap("conv.conv1.weight") == "conv1_x.weight"


def test_named_groups_in_python_syntax():
    remap = compile_remap(r"^(?P<head>\w+)\.(?P<rest>.*)", r"\g<rest>.\g<head>")
    assert remap("fc.weight") == "weight.fc"


def test_python_syntax_loads_a_file():
    device = NdArray().device()
    model = LinearConfig(3, 2).init(device)
    args = LoadArgs(PT).with_key_remap(r"^fc\.(.*)", r"\1")
    record = PyTorchFileRecorder(FullPrecisionSettings).load(args, device, target=model)
    assert sorted(record) == ["bias", "weight"]
