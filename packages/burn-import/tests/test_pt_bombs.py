"""Memory bombs in `.pt`, pickle and safetensors files: each is built here (small files), loaded in
a fresh process (`bomb_child.py`), and must be refused with `RecordImportError` naming the file,
its peak RSS growing by at most 64 MiB + 2 x the file's size (the bound the loaders promise)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _pt_craft import laughs, memo_bomb, state_dict, tensor, write_zip
from bomb_child import launch



def load_in_child(loader: str, path: Path) -> dict:
    return launch(loader, str(path))


def assert_refused(out: dict, path: Path, *phrases: str) -> None:
    """A typed error naming the file (and each phrase), within 64 MiB + 2x the file."""
    assert out["error"] == "RecordImportError", out
    assert path.name in out["message"], out
    for phrase in phrases:
        assert phrase in out["message"], out
    bound = 64 + 2 * path.stat().st_size / 2**20
    assert out["rss_after"] - out["rss_before"] <= bound, out


# F8: LONG_BINPUT 2^26 made the C unpickler allocate a 1 GiB memo table (2^28: 4 GiB).
@pytest.mark.parametrize("container", ["pickle", "zip"])
def test_memo_bomb_is_refused_before_unpickling(tmp_path, container):
    blob = memo_bomb(1 << 26)
    if container == "pickle":
        path = tmp_path / "memo.pkl"
        path.write_bytes(blob)
    else:
        path = write_zip(tmp_path / "memo.pt", blob, {})
    out = load_in_child("pickle" if container == "pickle" else "pt", path)
    assert_refused(out, path, "memo index 67108864")


# F9: 30 levels of a list holding the previous level twice: 565 bytes, 2^30 leaves once every
# shared reference is expanded into its own path. It never finished before.
def test_billion_laughs_is_refused_by_its_expanded_size(tmp_path):
    path = write_zip(tmp_path / "laughs.pt", laughs(30, 2), {})
    out = load_in_child("pt", path)
    assert_refused(out, path, "expands to more than")
    assert out["seconds"] < 30, out


# F10: each stride-0 tensor (16 MiB from one float) is below the per-tensor broadcast limit, but
# sixteen of them from a 3 KB file would take 256 MiB: the total is what is bounded.
def test_total_of_broadcasts_is_bounded(tmp_path):
    entries = {f"t{k}": tensor("0", 1, (2048, 2048), (0, 0)) for k in range(16)}
    path = write_zip(tmp_path / "broadcast.pt", state_dict(entries), {"0": bytes(4)})
    out = load_in_child("pt", path)
    assert_refused(out, path, "materialized tensors", "size [2048, 2048]")


# F10: 64 full views of one 8 MiB storage took 563 MiB: each view is its own copy.
def test_total_of_shared_storage_views_is_bounded(tmp_path):
    n = 2 << 20
    entries = {f"v{k}": tensor("0", n, (n,), (1,)) for k in range(64)}
    path = write_zip(tmp_path / "views.pt", state_dict(entries), {"0": bytes(4 * n)})
    out = load_in_child("pt", path)
    assert_refused(out, path, "materialized tensors")


# Found beside F9: the tree of shared references can end in a tensor, materialized once per path.
def test_shared_tensor_leaf_is_bounded(tmp_path):
    leaf = tensor("0", 1 << 18, (1 << 18,), (1,))  # 1 MiB
    blob = laughs(12, 2).replace(b"]K\x00aq\x00", b"]" + leaf + b"aq\x00", 1)
    path = write_zip(tmp_path / "leaf.pt", blob, {"0": bytes(1 << 20)})
    out = load_in_child("pt", path)
    assert_refused(out, path, "materialized tensors")


# Beyond the findings: one-byte opcodes that each build a 216-byte set (or a 64-byte dict).
def test_object_flood_pickle_is_refused_by_its_estimated_size(tmp_path):
    path = tmp_path / "sets.pkl"
    path.write_bytes(b"\x80\x04](" + b"\x8f" * 4_000_000 + b"e.")
    out = load_in_child("pickle", path)
    assert_refused(out, path, "objects the pickle builds", "EMPTY_SET")


# The "Low" finding of the review: a million tiny safetensors tensors (59 MB) took 1.2 GiB.
def test_header_of_many_tiny_tensors_is_bounded(tmp_path):
    parts = ",".join(
        f'"t{k}":{{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}' for k in range(300_000)
    )
    header = ("{" + parts + "}").encode()
    path = tmp_path / "tiny.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header)
    out = load_in_child("safetensors", path)
    assert_refused(out, path, "the header")


# Honest files still load: a 50 MB float32 tensor, and a weight tied under two names (one
# storage, materialized twice, 2x the file).
def test_large_and_tied_tensors_still_load(tmp_path):
    from burn_import import load_pytorch

    values = np.random.default_rng(0).standard_normal(12_500_000).astype(np.float32)
    n = values.size
    entries = {
        "big": tensor("0", n, (2500, 5000), (5000, 1)),
        "tied": tensor("0", n, (2500, 5000), (5000, 1)),
    }
    path = write_zip(tmp_path / "big.pt", state_dict(entries), {"0": values.tobytes()})
    assert path.stat().st_size > 50_000_000
    loaded = load_pytorch(path)
    for key in ("big", "tied"):
        np.testing.assert_array_equal(loaded[key].array.reshape(-1), values)


def test_a_50_mb_safetensors_file_still_loads(tmp_path):
    from burn_import import load_safetensors, save_safetensors

    values = np.random.default_rng(1).random((2500, 5000), dtype=np.float32)
    path = save_safetensors({"w": values}, tmp_path / "w.safetensors")
    assert path.stat().st_size > 50_000_000
    np.testing.assert_array_equal(load_safetensors(path)["w"].array, values)
