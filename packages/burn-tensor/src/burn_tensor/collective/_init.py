"""`init_process_group()`: this process's communicator from the launcher's environment.

`python -m burn_train.launch` (or any launcher) sets `BURN_RANK`, `BURN_WORLD_SIZE`,
`BURN_MASTER_ADDR`, `BURN_MASTER_PORT` and `BURN_COLLECTIVE_TOKEN` (the job's shared secret,
see `_auth.py`) for each process; `BURN_COLLECTIVE` chooses the transport (`tcp`, or `nccl` for
GPUs, `mpi` for CPU clusters through mpi4py -- ranks from `mpiexec`, none of the variables
above needed; default `tcp`). Ranks started by hand need the same variables, the same token on all.
"""

from __future__ import annotations

import os

from ._errors import CollectiveError
from ._process_group import DEFAULT_TIMEOUT, ProcessGroup

ENV = ("BURN_RANK", "BURN_WORLD_SIZE", "BURN_MASTER_ADDR", "BURN_MASTER_PORT")


def in_process_group() -> bool:
    """Whether this process was started as a rank of a group (by a launcher that sets
    BURN_WORLD_SIZE and BURN_MASTER_PORT; world size 1 included, so one process still goes
    through the group's transport, e.g. NCCL)."""
    if os.environ.get("BURN_COLLECTIVE") == "mpi":  # mpiexec/srun made the group
        return True
    return bool(os.environ.get("BURN_WORLD_SIZE")) and bool(os.environ.get("BURN_MASTER_PORT"))


def init_process_group(backend: str | None = None, timeout: float = DEFAULT_TIMEOUT):
    """Join the group the environment describes; returns this process's communicator."""
    kind = backend or os.environ.get("BURN_COLLECTIVE", "tcp")
    if kind == "mpi":  # rank and world size from MPI itself (mpiexec / srun)
        from ._mpi import MpiGroup

        return MpiGroup()
    missing = [v for v in ENV if not os.environ.get(v)]
    if missing:
        raise CollectiveError(
            f"init_process_group: {', '.join(missing)} not set; start the script with "
            "`python -m burn_train.launch --nproc-per-node N script.py`"
        )
    try:
        rank, world = int(os.environ["BURN_RANK"]), int(os.environ["BURN_WORLD_SIZE"])
        port = int(os.environ["BURN_MASTER_PORT"])
    except ValueError as err:
        raise CollectiveError(f"init_process_group: malformed rank variables ({err})") from None
    store = ProcessGroup.connect(rank, world, os.environ["BURN_MASTER_ADDR"], port, timeout)
    if kind == "tcp":
        return store
    if kind == "nccl":
        from ._nccl import NcclGroup

        local = int(os.environ.get("BURN_LOCAL_RANK", rank))
        return NcclGroup(store, local)
    store.close()
    raise ValueError(f"init_process_group: backend must be 'tcp', 'nccl' or 'mpi', got {kind!r}")
