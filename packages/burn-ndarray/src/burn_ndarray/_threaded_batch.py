"""Threaded conv, pool and interpolation ops: the batch (conv) or the batch x channel planes
(pools, interpolation) split into parts run on `_parallel.batch_map`. Installed by
`_threaded_ops.install`, split from it by meaning."""

from __future__ import annotations

import numpy as np

from . import _blas, _parallel
from ._threaded_ops import _quiet_pair


def conv(split, combine, threads, m, grain):
    """A conv op (`CONV` of `_threaded_ops`) split over its batch, each part one BLAS thread."""
    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)

        def op(*args):
            token = set_(state)
            try:
                x = args[split[0]]
                work = _conv_work(args, split)
                parts = work // grain  # each part at least `grain` of work (see _planes)
                if x.shape[0] < 2 or work < m or parts < 2:
                    # One call: its GEMM gets the BLAS threads its size can use.
                    _blas.set_threads(_blas.gemm_threads(_conv_macs(args, split), threads))
                    return fn(*args)
                call = _reorder(fn, split, len(args))
                return _parallel.batch_map(call, threads, *_parts(args, split), parts=parts)
            finally:
                reset(token)

        return op

    def _parts(args, split):
        whole = tuple(a for i, a in enumerate(args) if i not in split)
        return tuple(args[i] for i in split), whole, combine

    return make


def _conv_work(args, split) -> int:
    # Output-sized work: input elements times output channels over input channels.
    x = args[split[0]]
    w = next((a for a in args if isinstance(a, np.ndarray) and a.ndim == 4 and a is not x), None)
    if w is None:
        return x.size
    return x.size * max(1, w.shape[0] // max(1, w.shape[1]))


def _conv_macs(args, split) -> int:
    # The GEMMs' multiply-adds, roughly: input positions times the weight's size.
    x = args[split[0]]
    w = next((a for a in args if isinstance(a, np.ndarray) and a.ndim == 4 and a is not x), None)
    if w is None or x.ndim < 2:
        return x.size
    return (x.size // max(1, x.shape[1])) * w.size


def _reorder(fn, split, nargs):
    """fn taking its arguments in their own order, called as (split..., whole...)."""
    rest = [i for i in range(nargs) if i not in split]

    def call(*parts):
        args = [None] * nargs
        for i, v in zip(list(split) + rest, parts):
            args[i] = v
        return fn(*args)

    return call


def planes(split, threads, m, grain):
    """Pools and interpolation treat each (n, c) plane alone: split n*c planes.

    Parts hold at least `grain` elements (as `conv` parts hold `grain` of output-sized work):
    every part costs Python-level setup under the GIL, so splitting a 600k-element pool of the
    guide model 16 ways on 16 cores measured slower than 4 ways (the guide's training step took
    104 ms with parts as many as threads, 31 ms with 4 threads in all)."""

    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)

        def op(*args):
            token = set_(state)
            try:
                x = args[split[0]]
                if x.size < m or x.shape[0] * x.shape[1] < 2:
                    return fn(*args)
                n, c = x.shape[:2]
                parts = tuple(args[i].reshape((n * c, 1) + args[i].shape[2:]) for i in split)
                whole = tuple(a for i, a in enumerate(args) if i not in split)
                out = _parallel.batch_map(
                    _reorder(fn, split, len(args)),
                    threads,
                    parts,
                    whole,
                    parts=max(1, x.size // grain),
                )
            finally:
                reset(token)
            if isinstance(out, tuple):
                return tuple(o.reshape((n, c) + o.shape[2:]) for o in out)
            return out.reshape((n, c) + out.shape[2:])

        return op

    return make
