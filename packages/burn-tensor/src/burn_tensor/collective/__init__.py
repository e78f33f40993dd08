"""Collectives: all-reduce, broadcast and all-gather across devices or processes.

- `ThreadGroup(devices)`: devices of one process, one thread per device (`communicator(rank)`).
- `ProcessGroup.connect(rank, world, addr, port)` / `init_process_group()`: one process per
  device over TCP (CPU), or NCCL on GPUs (`NcclGroup`, through cupy).

A group of several processes admits only processes that hold the job's secret,
`BURN_COLLECTIVE_TOKEN` (`TOKEN_ENV`; the launcher makes one per job with `new_token()`), each
side of every connection proving it by HMAC (`_auth.py`, `_rendezvous.py`).

`all_reduce(t, comm, "sum" | "mean")`, `broadcast(t, comm, root)`, `all_gather(t, comm)` are
called by every rank in the same order. `all_reduce` is differentiable under Autodiff: its
backward all-reduces the gradients (see `_differentiable.py`). `all_reduce_async(t, comm)`
starts one and returns a `Work` (`wait()`), on a background thread (TCP) or a second CUDA
stream (NCCL): see `_async.py`.
"""

from ._async import Work, all_reduce_async
from ._auth import TOKEN_ENV, new_token
from ._differentiable import all_reduce, register_autodiff_all_reduce
from ._errors import CollectiveError
from ._group import Communicator, all_gather, broadcast
from ._init import in_process_group, init_process_group
from ._mpi import MpiGroup
from ._nccl import NcclGroup
from ._process_group import ProcessGroup
from ._thread_group import ThreadCommunicator, ThreadGroup

__all__ = [
    "TOKEN_ENV",
    "CollectiveError",
    "Communicator",
    "MpiGroup",
    "NcclGroup",
    "ProcessGroup",
    "ThreadCommunicator",
    "ThreadGroup",
    "Work",
    "all_gather",
    "all_reduce",
    "all_reduce_async",
    "broadcast",
    "in_process_group",
    "init_process_group",
    "new_token",
    "register_autodiff_all_reduce",
]
