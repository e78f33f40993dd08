"""Every fixture written by PyTorch 2.13 loads and equals torch's tensors bit for bit.

The expected values were stored by `fixtures/generate.py` from torch's own tensors (bf16 as raw
16-bit patterns); nothing here imports torch.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from burn_import import RecordImportError, load_pytorch, load_safetensors
from burn_import._dtypes import itemsize
from burn_import._keys import flatten_tensors
from burn_import._unpickler import safe_loads

PT_FIXTURES = [
    "linear.pt", "conv2d.pt", "conv1d.pt", "key_remap.pt", "batchnorm.pt", "layernorm.pt",
    "embedding.pt", "lstm.pt", "bilstm.pt", "mlp.pt", "mlp_protocol4.pt", "checkpoint.pt",
    "dtypes.pt", "legacy.pt", "views.pt", "legacy_views.pt",
]  # fmt: skip
ST_FIXTURES = ["dtypes.safetensors", "mlp.safetensors", "mlp_f16.safetensors"]


def assert_matches_torch(name: str, tensors: dict, manifest: dict, expected: dict) -> int:
    """Compare every tensor of fixture `name` with torch's bytes; returns how many."""
    entries = manifest[name]["tensors"]
    assert set(entries) <= set(tensors), set(entries) - set(tensors)
    for key, meta in entries.items():
        want, got = expected[f"{name}::{key}"], tensors[key].array
        torch_dtype = meta["dtype"]
        shape = tuple(meta["shape"]) or (1,)  # Burn has no rank-0 tensors: a scalar is [1]
        assert got.shape == shape, (key, got.shape, shape)
        if torch_dtype == "bfloat16":
            # Widened exactly: the f32's upper half is torch's bf16, the lower half is zero.
            bits = got.view(np.uint32)
            assert got.dtype == np.float32
            assert np.array_equal((bits >> 16).astype(np.uint16).ravel(), want.ravel()), key
            assert not (bits & 0xFFFF).any(), key
        elif torch_dtype in ("uint16", "uint32", "uint64"):
            assert got.dtype == np.int64 and np.array_equal(got.ravel(), want.ravel()), key
        else:
            assert got.dtype == want.dtype, (key, got.dtype, want.dtype)
            assert got.tobytes() == want.tobytes(), key  # bit for bit: NaN, -0.0, subnormals
    return len(entries)


@pytest.mark.parametrize("name", PT_FIXTURES)
def test_pt_fixture_equals_torch(name, manifest, expected, fixture_path):
    tensors = flatten_tensors(load_pytorch(fixture_path(name)), name)
    assert assert_matches_torch(name, tensors, manifest, expected) >= 1


@pytest.mark.parametrize("name", ST_FIXTURES)
def test_safetensors_fixture_equals_torch(name, manifest, expected, fixture_path):
    tensors = load_safetensors(fixture_path(name))
    assert assert_matches_torch(name, tensors, manifest, expected) >= 1


def test_every_dtype_is_covered(manifest):
    wanted = {"float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8"}
    wanted |= {"uint8", "bool", "uint16", "uint32", "uint64"}
    for name in ("dtypes.pt", "dtypes.safetensors"):
        assert {m["dtype"] for m in manifest[name]["tensors"].values()} == wanted
    legacy = {m["dtype"] for m in manifest["legacy.pt"]["tensors"].values()}
    assert legacy == wanted - {"uint16", "uint32", "uint64"}


def test_views_come_from_one_storage_and_are_copies(fixture_path):
    sd = load_pytorch(fixture_path("views.pt"))
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert np.array_equal(sd["transposed"].array, base.T)
    assert np.array_equal(sd["window"].array, base[1:3, 2:5])
    assert np.array_equal(sd["every_other"].array, base[:, ::2])
    assert np.array_equal(sd["row"].array, base[3])
    assert np.array_equal(sd["expanded"].array, np.full((3, 4), 7.0, np.float32))
    assert sd["ints"].array.tolist() == [2, 5]
    for key in ("transposed", "window", "every_other", "row"):
        assert sd[key].array.flags.c_contiguous and sd[key].array.base is not sd["base"].array
    assert not np.shares_memory(sd["base"].array, sd["same"].array)


def test_checkpoint_keeps_plain_values(fixture_path):
    ckpt = load_pytorch(fixture_path("checkpoint.pt"))
    assert ckpt["epoch"] == 3
    assert ckpt["config"] == {"d_hidden": 8, "name": "mlp", "dropout": 0.1, "sizes": (4, 8, 3)}
    group = ckpt["optimizer"]["param_groups"][0]
    assert (
        group["lr"] == 1e-3 and group["betas"] == (0.9, 0.999) and group["params"] == list(range(6))
    )
    assert sorted(ckpt["optimizer"]["state"]) == list(range(6))
    assert ckpt["optimizer"]["state"][0]["step"].tolist() == [1.0]
    assert list(load_pytorch(fixture_path("checkpoint.pt"), "state_dict")) == [
        "seq.0.weight", "seq.0.bias", "seq.2.weight", "seq.2.bias", "norm.weight", "norm.bias",
    ]  # fmt: skip


def _rezip(src, dst, rename=None, compress=zipfile.ZIP_STORED, transform=None):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compress) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            name = rename(info.filename) if rename else info.filename
            zout.writestr(name, transform(name, data) if transform else data)
    return dst


def test_deflated_and_renamed_archives_load(tmp_path, fixture_path):
    # Re-zipped by another tool: compressed members and another archive folder name.
    src = fixture_path("mlp.pt")
    dst = _rezip(
        src, tmp_path / "x.pt", lambda n: "other/" + n.split("/", 1)[1], zipfile.ZIP_DEFLATED
    )
    a, b = load_pytorch(src), load_pytorch(dst)
    assert all(np.array_equal(a[k].array, b[k].array) for k in a)


def test_big_endian_archive(tmp_path, fixture_path):
    # torch on a big-endian machine writes native byte order and says so in `byteorder`: build
    # such a file by swapping every storage by the element size of the tensors that use it.
    src = fixture_path("dtypes.pt")
    with zipfile.ZipFile(src) as z:
        pkl = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    element_size = {
        ref.storage.key: itemsize(ref.dtype) for ref in safe_loads(pkl, "x", {}).values()
    }

    def swap(name, data):
        if name.endswith("/byteorder"):
            return b"big"
        size = element_size.get(name.rsplit("/", 1)[-1], 1) if "/data/" in name else 1
        return np.frombuffer(data, f"<u{size}").byteswap().tobytes() if size > 1 else data

    little = load_pytorch(src)
    big = load_pytorch(_rezip(src, tmp_path / "big.pt", transform=swap))
    assert list(big) == list(little)
    for key in little:
        assert big[key].dtype == little[key].dtype
        assert big[key].array.tobytes() == little[key].array.tobytes(), key


def test_missing_storage_member_is_an_error(tmp_path, fixture_path):
    src = fixture_path("linear.pt")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(tmp_path / "x.pt", "w") as zout:
        for info in zin.infolist():
            if not info.filename.endswith("/data/0"):
                zout.writestr(info.filename, zin.read(info))
    with pytest.raises(RecordImportError, match="missing zip member 'linear/data/0'"):
        load_pytorch(tmp_path / "x.pt")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not a PyTorch file"),
        (b"hello world", "not a PyTorch file"),
        (b"\x80\x02K\x01.", "bad magic number"),
        (b"PK\x03\x04garbage", "unreadable zip"),
        (b"x" * 257 + b"ustar" + b"\0" * 300, "tar format"),
    ],
)
def test_not_a_pt_file(tmp_path, content, message):
    (tmp_path / "f.pt").write_bytes(content)
    with pytest.raises(RecordImportError, match=message):
        load_pytorch(tmp_path / "f.pt")


def test_zip_without_data_pkl(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a/other.txt", b"x")
    (tmp_path / "f.pt").write_bytes(buf.getvalue())
    with pytest.raises(RecordImportError, match="exactly one <archive>/data.pkl, found 0"):
        load_pytorch(tmp_path / "f.pt")


def test_missing_file(tmp_path):
    with pytest.raises(RecordImportError, match="no such file"):
        load_pytorch(tmp_path / "nope.pt")
    with pytest.raises(RecordImportError, match="no such file"):
        load_safetensors(tmp_path / "nope.safetensors")


def test_loading_never_imports_torch(fixture_path):
    """Even where torch is installed, burn_import does not touch it: block it and load."""
    import subprocess
    import sys

    files = [str(fixture_path(n)) for n in PT_FIXTURES + ST_FIXTURES]
    script = (
        "import sys\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch is blocked in this test')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        "from burn_import import load_pytorch, load_safetensors\n"
        "for f in sys.argv[1:]:\n"
        "    (load_pytorch if f.endswith('.pt') else load_safetensors)(f)\n"
        "print('torch' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *files],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
