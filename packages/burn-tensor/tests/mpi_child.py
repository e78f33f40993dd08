"""Child of test_collective_mpi.py, run as `mpiexec -n N python mpi_child.py OUT`: joins the
group through `init_process_group()` with BURN_COLLECTIVE=mpi and writes what each collective
gave to OUT/rank-R.npz."""

import sys

import numpy as np
from burn_ndarray import NdArray
from burn_tensor import Tensor
from burn_tensor.collective import all_gather, all_reduce, broadcast, init_process_group

comm = init_process_group()
r, n = comm.rank, comm.world_size
d = NdArray().device(0)
x = Tensor.from_data(np.random.default_rng(r).standard_normal((3, 5)).astype(np.float32), d)
out = {
    "world": np.array(n),
    "sum": all_reduce(x, comm, "sum").numpy(),
    "mean": all_reduce(x, comm, "mean").numpy(),
    "bcast": broadcast(x, comm, n - 1).numpy(),
    "gather": np.stack([t.numpy() for t in all_gather(x, comm)]),
}
comm.barrier()
np.savez(f"{sys.argv[1]}/rank-{r}.npz", **out)
if len(sys.argv) > 2 and sys.argv[2] == "mismatch":
    try:
        all_reduce(Tensor.from_data(np.ones(3 + r, np.float32), d), comm)
    except Exception as err:  # noqa: BLE001 - the message is the outcome checked
        print(f"rank {r}: {type(err).__name__}: {err}", flush=True)
