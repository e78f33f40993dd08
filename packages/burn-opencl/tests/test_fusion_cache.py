"""The fused-kernel binary cache (`OpenClRuntime.compile`, what `OpenCl.runtime(device)` returns, security review F14): a cached
binary reaches the driver only when its size and sha256 match its sidecar and is kept only when
it holds the kernel asked for, so a truncated binary (SIGSEGV inside PoCL), a bit-flipped one or
two swapped ones (INVALID_KERNEL_NAME on every run) are rebuilt; an unsafe cache folder is not
used. (The vec8 kernels PoCL's own cache could not read back: burn-fusion's
`tests/test_vec8_twice.py`.)"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from burn_opencl import OpenCl
from burn_opencl._array import ClArray
from burn_tensor import _cache_dir, cache
from burn_tensor.cache import CacheWarning

DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")
B = OpenCl(DEVICE_TYPE)


def _source(tag: str, add: int) -> tuple[str, str]:
    name = f"burn_test_{tag}"
    return (
        f"__kernel void {name}(const int n, __global float* o0, __global const float* in0) {{\n"
        f"  for (int i = get_global_id(0); i < n; i += get_global_size(0)) o0[i] = in0[i] + {add}.0f;\n"
        "}\n",
        name,
    )  # fmt: skip


def _run_kernel(rt, kernel) -> np.ndarray:
    x = np.arange(37, dtype=np.float32)
    out = rt.empty((37,), np.float32)
    rt.launch(kernel, 37, [], [out], [ClArray.from_numpy(rt.rt, x)], [])
    return B.float_into_data(out).array - x


@pytest.fixture
def disk(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_cache_dir, "_WARNED", set())
    rt = B.runtime(B.device())
    srcs = {"a": _source(f"a_{tmp_path.name}", 1), "b": _source(f"b_{tmp_path.name}", 2)}
    for src, name in srcs.values():
        assert rt.compile(src, name)[1] == "compiled"
    bins = {k: rt.disk / (rt.binary_key(src) + ".bin") for k, (src, _) in srcs.items()}
    assert all(cache.check(p) for p in bins.values())
    return srcs, bins


def _fresh():
    return B.runtime(B.device())  # empty memory: the disk is asked


def test_a_verified_binary_serves_a_new_runtime(disk, tmp_path):
    srcs, bins = disk
    rt = _fresh()
    k, how = rt.compile(*srcs["a"])
    assert how == "disk"
    np.testing.assert_array_equal(_run_kernel(rt, k), 1.0)
    for p in [tmp_path, *bins["a"].parents][: len(bins["a"].relative_to(tmp_path).parts)]:
        assert os.stat(p).st_mode & 0o777 == 0o700, p


def test_swapped_binaries_are_rebuilt(disk):
    srcs, bins = disk
    a, b = bins["a"].read_bytes(), bins["b"].read_bytes()
    bins["a"].write_bytes(b)  # each the other's kernel: INVALID_KERNEL_NAME forever, before
    bins["b"].write_bytes(a)
    rt = _fresh()
    for key, add in (("a", 1.0), ("b", 2.0)):
        k, how = rt.compile(*srcs[key])
        assert how == "compiled"
        np.testing.assert_array_equal(_run_kernel(rt, k), add)
        assert cache.check(bins[key])  # stored again, whole


def test_a_whole_entry_moved_to_another_name_is_rebuilt(disk):
    srcs, bins = disk
    os.replace(bins["a"], bins["b"])  # a's file and its sidecar under b's name
    os.replace(cache.sidecar(bins["a"]), cache.sidecar(bins["b"]))
    rt = _fresh()
    k, how = rt.compile(*srcs["b"])
    assert how == "compiled"
    np.testing.assert_array_equal(_run_kernel(rt, k), 2.0)


def test_a_bit_flipped_binary_is_rebuilt(disk):
    srcs, bins = disk
    data = bytearray(bins["a"].read_bytes())
    data[len(data) // 2] ^= 0x01
    bins["a"].write_bytes(bytes(data))
    k, how = _fresh().compile(*srcs["a"])
    assert how == "compiled"


CHILD = """
import sys
from burn_opencl import OpenCl
b = OpenCl(sys.argv[1])
rt = b.runtime(b.device())
print(rt.compile(sys.stdin.read(), sys.argv[2])[1])
"""


def test_a_truncated_binary_is_rebuilt_not_loaded(disk, tmp_path):
    srcs, bins = disk
    size = bins["a"].stat().st_size
    os.truncate(bins["a"], size // 2)  # handed to PoCL, this killed the process (SIGSEGV)
    src, name = srcs["a"]
    out = subprocess.run(
        [sys.executable, "-c", CHILD, DEVICE_TYPE, name], input=src, capture_output=True,
        text=True, timeout=300, check=False, env={**os.environ, "BURN_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.split()[-1] == "compiled"
    assert cache.check(bins["a"]) and bins["a"].stat().st_size == size


def test_an_unsafe_cache_folder_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_cache_dir, "_WARNED", set())
    os.chmod(tmp_path, 0o777)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        rt = _fresh()
    assert rt.disk is None
    src, name = _source(f"c_{tmp_path.name}", 3)
    k, how = rt.compile(src, name)
    assert how == "compiled" and list(tmp_path.iterdir()) == []
    np.testing.assert_array_equal(_run_kernel(rt, k), 3.0)
