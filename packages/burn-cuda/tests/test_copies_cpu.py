"""Step capture's batched input copies (`_capture_copies.launch_word_copies`: `copy_many8`,
a table of (dst, src, words) entries by value, a block row each) on the CPU stand-in: every
pair's bytes copied exactly, across more entries than one launch's table holds, empty and
odd-sized tensors included. (On the GPU, `test_copy_many_gpu.py` runs them inside the CUDA
graph `copy_many` records.)"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_backend import cuda_on_cpu_backend  # noqa: E402


def test_word_copies_copy_every_pair_across_tables():
    from burn_cuda import _capture_copies

    with cuda_on_cpu_backend() as (_backend, fake):
        rng = np.random.default_rng(0)
        n = _capture_copies.COPY_TABLE + 7  # two launches
        sizes = [int(rng.integers(1, 3000)) * 2 for _ in range(n)]  # float32 pairs: 8-byte words
        sizes[3] = 70000  # more words than one block row's threads: the loop strides
        srcs = [fake.asarray(rng.standard_normal(k).astype(np.float32)) for k in sizes]
        dsts = [fake.zeros(k, np.float32) for k in sizes]
        triples = [(d.data.ptr, s.data.ptr, s.nbytes) for d, s in zip(dsts, srcs)]
        fake.launches.clear()
        _capture_copies.launch_word_copies(triples)
        names = [launch.name for launch in fake.launches]
        assert names == ["copy_many8", "copy_many8"], names
        for d, s in zip(dsts, srcs):
            np.testing.assert_array_equal(np.asarray(d), np.asarray(s))


def test_copy_kernel_compiles_for_sm90(nvcc_ptx):
    from burn_cuda._capture_copies import COPY_SOURCE

    proc, ptx = nvcc_ptx("copy_many8", COPY_SOURCE)
    assert proc.returncode == 0, proc.stderr
    assert ".entry copy_many8" in ptx.read_text()
