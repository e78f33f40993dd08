"""Truncated, bit-flipped and random `.pt` / `.safetensors` files: a `RecordImportError` or a
correct load, never another exception, a crash or a hang.

Deterministic part: every truncation length of four small files and seeded random byte flips.
Property part (hypothesis): mutations, random headers and random pickle streams; the profile
`burn-import-ci` (default, 200 derandomized examples per property) or `long` (2,500; select with
`HYPOTHESIS_PROFILE=long`) is registered in conftest.py.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from burn_import import PyTorchFileRecorder, RecordImportError, SafetensorsFileRecorder
from burn_import._unpickler import safe_loads
from burn_ndarray import NdArray
from burn_nn import LayerNormConfig, LinearConfig, Module
from hypothesis import given, settings
from hypothesis import strategies as st

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FILES = {
    "linear.pt": FIXTURES / "pt" / "linear.pt",
    "legacy.pt": FIXTURES / "pt" / "legacy.pt",
    "mlp.safetensors": FIXTURES / "safetensors" / "mlp.safetensors",
    "dtypes.safetensors": FIXTURES / "safetensors" / "dtypes.safetensors",
}
PROFILE = settings.get_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "burn-import-ci")
    if os.environ.get("HYPOTHESIS_PROFILE") in ("burn-import-ci", "long")
    else "burn-import-ci"
)
WORK = Path(tempfile.mkdtemp(prefix="burn-import-fuzz-"))
COUNT = {"cases": 0}


class Mlp(Module):
    seq: list
    norm: Module


def target():
    d = NdArray().device()
    layers = [LinearConfig(4, 8).init(d), LinearConfig(8, 3).init(d)]
    return Mlp(seq=layers, norm=LayerNormConfig(3).init(d))


def load_bytes(data: bytes, suffix: str, with_target: bool = False) -> None:
    """Load `data` as a file; only success or RecordImportError may come out."""
    COUNT["cases"] += 1
    path = WORK / f"case{suffix}"
    path.write_bytes(data)
    try:
        recorder_for(suffix).load(path, target=target() if with_target else None)
    except RecordImportError as err:
        assert str(err)  # a message, naming what is wrong


def suffix_of(name: str) -> str:
    return ".pt" if name.endswith(".pt") else ".safetensors"


def recorder_for(name: str):
    return PyTorchFileRecorder() if name.endswith(".pt") else SafetensorsFileRecorder()


@pytest.mark.parametrize("name", list(FILES))
def test_every_truncation_is_an_error(name):
    data = FILES[name].read_bytes()
    path = WORK / f"trunc{suffix_of(name)}"
    for n in range(len(data)):
        path.write_bytes(data[:n])
        with pytest.raises(RecordImportError):
            recorder_for(name).load(path)
        COUNT["cases"] += 1


@pytest.mark.parametrize("name", list(FILES))
def test_seeded_byte_flips(name):
    data = FILES[name].read_bytes()
    rng = np.random.default_rng(len(data))
    for i in range(250):
        buf = bytearray(data)
        for pos in rng.integers(0, len(buf), size=int(rng.integers(1, 5))):
            buf[pos] = int(rng.integers(0, 256))
        load_bytes(bytes(buf), suffix_of(name), with_target=(i % 5 == 0 and name != "legacy.pt"))


mutations = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8)


@settings(PROFILE)
@given(st.sampled_from(sorted(FILES)), mutations, st.integers(0, 10**6), st.booleans())
def test_property_mutated_files(name, changes, cut, truncate):
    buf = bytearray(FILES[name].read_bytes())
    for pos, value in changes:
        buf[pos % len(buf)] = value
    if truncate:
        buf = buf[: cut % (len(buf) + 1)]
    load_bytes(bytes(buf), suffix_of(name), with_target=name.startswith("mlp"))


@settings(PROFILE)
@given(
    st.sampled_from([b"", b"PK\x03\x04", b"\x80\x02", b"\x80\x04\x95", b"\x10\0\0\0\0\0\0\0{"]),
    st.binary(max_size=300),
    st.sampled_from([".pt", ".safetensors"]),
)
def test_property_random_bytes(prefix, body, suffix):
    load_bytes(prefix + body, suffix)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 40) | st.sampled_from(["F32", "I64", "BF16", "x"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["dtype", "shape", "data_offsets", "__metadata__", "w", "b"]), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


@settings(PROFILE)
@given(json_values, st.binary(max_size=64))
def test_property_safetensors_headers(header, data):
    text = json.dumps(header).encode()
    load_bytes(len(text).to_bytes(8, "little") + text + data, ".safetensors")


OPCODES = [
    b"(",
    b")",
    b"]",
    b"}",
    b"t",
    b"R",
    b"s",
    b"a",
    b"e",
    b"u",
    b"N",
    b"K\x01",
    b"X\x01\x00\x00\x00a",
]
OPCODES += [
    b"ctorch._utils\n_rebuild_tensor_v2\n",
    b"ctorch\nFloatStorage\n",
    b"Q",
    b"\x85",
    b"\x86",
]
OPCODES += [
    b"q\x00",
    b"h\x00",
    b"\x94",
    b"b",
    b"0",
    b"2",
    b"\x93",
    b"\x8c\x05torch",
    b"G?\xf0\x00\x00\x00\x00\x00\x00",
]


@settings(PROFILE)
@given(
    st.lists(st.sampled_from(OPCODES), max_size=40),
    st.sampled_from([b"\x80\x02", b"\x80\x04", b""]),
)
def test_property_random_pickle_streams(ops, proto):
    COUNT["cases"] += 1
    try:
        safe_loads(proto + b"".join(ops) + b".", "fuzz", {})
    except RecordImportError:
        pass


def teardown_module(module):
    print(f"\nburn-import fuzz: {COUNT['cases']} cases (profile {PROFILE.max_examples} examples)")
    shutil.rmtree(WORK, ignore_errors=True)
