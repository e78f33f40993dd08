"""The Burnpack byte layout: against the format's description (header, CBOR metadata written
out by hand here, 256-byte alignment), against a file written by Rust Burn, and against the
committed burn-py fixture, byte for byte."""

import struct
from pathlib import Path

import numpy as np
import pytest
from _net import net
from burn_store import (
    BurnpackError,
    BurnpackReader,
    BurnpackStore,
    Entry,
    save_into,
    write_burnpack,
)
from burn_tensor import TensorData

FIXTURES = Path(__file__).parent / "fixtures"
# `rust_mnist_web_head.bin`: the first 1536 bytes (header, metadata, padding) of
# examples/mnist-inference-web/model.bpk in tracel-ai/burn (commit 862ef266a), written by
# Rust Burn's BurnpackWriter: 1,044,776 bytes in all, sha256 b63e6601...c795ecc472.
RUST_SIZE = 1_044_776


def t(s: str) -> bytes:
    """A CBOR text string shorter than 24 bytes: major type 3, length in the first byte."""
    assert len(s) < 24
    return bytes([0x60 + len(s)]) + s.encode()


def u(n: int) -> bytes:
    """A CBOR unsigned integer in its shortest form (what ciborium writes)."""
    if n < 24:
        return bytes([n])
    if n < 256:
        return bytes([0x18, n])
    return bytes([0x19]) + n.to_bytes(2, "big")


def descriptor(shape, start, end, pid) -> bytes:
    return (
        b"\xa4" + t("dtype") + t("F32") + t("shape") + bytes([0x80 + len(shape)])
        + b"".join(u(d) for d in shape) + t("data_offsets") + b"\x82" + u(start) + u(end)
        + t("param_id") + u(pid)
    )  # fmt: skip


def test_layout_matches_the_description_byte_for_byte():
    raw = (FIXTURES / "net.bpk").read_bytes()
    metadata = (
        b"\xa2" + t("tensors") + b"\xa4"  # names in byte order, data in module order
        + t("fc.bias") + descriptor([3], 256, 268, 1001)
        + t("fc.weight") + descriptor([2, 3], 0, 24, 1000)
        + t("norm.beta") + descriptor([3], 768, 780, 2001)
        + t("norm.gamma") + descriptor([3], 512, 524, 2000)
        + t("metadata") + b"\xa3" + t("format") + t("burnpack") + t("producer") + t("burn")
        + t("version") + t("0.20.1")
    )  # fmt: skip
    header = b"NRUB" + struct.pack("<H", 1) + struct.pack("<I", len(metadata))
    assert raw[:10] == header and raw[10 : 10 + len(metadata)] == metadata
    start = 512  # 10 + 306 rounded up to a multiple of 256
    assert raw[10 + len(metadata) : start] == bytes(start - 10 - len(metadata))
    values = net()
    expected_data = {  # each tensor's little-endian f32 bytes at its aligned offset, zeros between
        0: values.fc.weight.val().numpy(), 256: values.fc.bias.val().numpy(),
        512: values.norm.gamma.val().numpy(), 768: values.norm.beta.val().numpy(),
    }  # fmt: skip
    data = bytearray(780)
    for offset, array in expected_data.items():
        blob = array.astype("<f4").tobytes()
        data[offset : offset + len(blob)] = blob
    assert raw[start:] == bytes(data)


def test_burn_py_writes_the_committed_fixture_again(tmp_path):
    save_into(net(), BurnpackStore.from_file(tmp_path / "net"))  # .bpk added
    assert (tmp_path / "net.bpk").read_bytes() == (FIXTURES / "net.bpk").read_bytes()


def _rust_file() -> bytes:
    head = (FIXTURES / "rust_mnist_web_head.bin").read_bytes()
    return head + bytes(RUST_SIZE - len(head))  # the data section's values are not needed


def test_reads_a_file_written_by_rust_burn_and_writes_its_layout():
    raw = _rust_file()
    r = BurnpackReader(raw)
    assert r.version == 1 and r.metadata == {} and r.data_start == 1536 and len(r.descriptors) == 18
    w = r.descriptors["conv1.conv.weight"]
    assert (w.dtype, w.shape, w.data_offsets) == ("F32", (64, 1, 3, 3), (0, 2304))
    assert w.param_id == 10777079075451239370
    assert r.descriptors["fc3.bias"].data_offsets == (1043200, 1043240)
    assert list(r.read("fc1.weight").shape) == [1600, 128]
    # the same tensors in the file's data order give Rust's bytes exactly
    order = sorted(r.descriptors.items(), key=lambda kv: kv[1].data_offsets[0])
    entries = [Entry(n, TensorData(np.zeros(d.shape, np.float32)), d.param_id) for n, d in order]
    assert write_burnpack(entries) == raw


def test_dtypes_round_trip_and_bool_is_one_byte():
    values = {
        "f64": np.array([1.5, -2.0]), "f16": np.array([0.5], np.float16),
        "i64": np.array([-(2**40)]), "i32": np.array([7], np.int32), "i16": np.array([-3], np.int16),
        "i8": np.array([-8], np.int8), "u8": np.array([255], np.uint8),
        "b": np.array([[True, False, True]]),
    }  # fmt: skip
    raw = write_burnpack([Entry(k, TensorData(v)) for k, v in values.items()])
    r = BurnpackReader(raw)
    start, end = r.descriptors["b"].data_offsets
    assert r.descriptors["b"].dtype == "Bool" and end - start == 3
    assert r.descriptors["f16"].dtype == "F16" and r.descriptors["u8"].dtype == "U8"
    for k, v in values.items():
        got = r.read(k).numpy()
        assert got.dtype == v.dtype and np.array_equal(got, v), k
    assert r.descriptors["f64"].param_id is None and b"param_id" not in raw


def _damaged(raw: bytes, at: int, new: bytes) -> bytes:
    return raw[:at] + new + raw[at + len(new) :]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda b: b[:6], r"6 bytes: too short for the 10-byte header"),
        (lambda b: b"NRUC" + b[4:], r"not a Burnpack file \(magic b'NRUC'"),
        (lambda b: _damaged(b, 4, b"\x02\x00"), r"format version 2 is newer than the supported 1"),
        (lambda b: _damaged(b, 6, struct.pack("<I", 200 * 2**20)), r"metadata size 209715200 exceeds"),
        (lambda b: _damaged(b, 6, struct.pack("<I", 5000)), r"truncated: the metadata needs 5000 bytes"),
        (lambda b: b[:1200], r"tensor 'norm.beta': data ends at byte 1292 but the file has 1200"),
        (lambda b: b.replace(b"cF32", b"cX32", 1), r"tensor 'fc.bias': unknown dtype 'X32'"),
        (lambda b: b.replace(b"\x81\x03", b"\x81\x04", 1), r"'fc.bias': 12 bytes for shape \[4\] of F32 \(needs 16\)"),
        (lambda b: _damaged(b, 10, b"\xff"), r"metadata is not valid CBOR"),
    ],
)
def test_damaged_files_name_what_is_wrong(change, message):
    raw = (FIXTURES / "net.bpk").read_bytes()
    with pytest.raises(BurnpackError, match=message):
        BurnpackReader(change(raw), name="net.bpk")


def test_duplicate_names_are_refused():
    with pytest.raises(BurnpackError, match=r"duplicates \['w'\]"):
        write_burnpack([Entry("w", TensorData([1.0])), Entry("w", TensorData([2.0]))])
