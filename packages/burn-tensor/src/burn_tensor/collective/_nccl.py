"""`NcclGroup`: collectives across processes on NVIDIA GPUs through NCCL (cupy's binding).

One process per GPU. The NCCL unique id is made by rank 0 and handed to the others through the
TCP `ProcessGroup` (the same rendezvous the CPU path uses), so the same code spans hosts. Tensors
reach NCCL as cupy arrays: zero-copy through DLPack when the tensor lives on the GPU
(`__dlpack__`), copied to and from the GPU otherwise (a host tensor still gets NCCL's sums, at the
cost of the copies: useful to check the path, not to train on). Collectives run on cupy's current
stream, the one burn's Cuda ops run on: a GPU result is returned still queued (the next op on
the stream waits for it, the host does not); broadcast and all_gather wait before returning.

NVLink multicast (NVLS) stays off: `NCCL_NVLS_ENABLE=0` is set before the communicator is made
(it must stay off on shared machines). NCCL's channels are capped at 8 (`nccl_channel_env`):
each channel is a thread block on its own SM, and gradient buckets are reduced while the
backward pass runs, so channels NCCL would take for peak bandwidth slow the pass instead.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._errors import CollectiveError
from ._group import check_op
from ._process_group import ProcessGroup

_DTYPES = {  # numpy dtype -> name of the NCCL data type constant in cupy.cuda.nccl
    "float32": "NCCL_FLOAT32",
    "float64": "NCCL_FLOAT64",
    "float16": "NCCL_FLOAT16",
    "int32": "NCCL_INT32",
    "int64": "NCCL_INT64",
    "uint8": "NCCL_UINT8",
    "int8": "NCCL_INT8",
}


def _cupy():
    try:
        import cupy
        from cupy.cuda import nccl
    except ImportError as err:
        raise CollectiveError(
            f"NcclGroup needs cupy with NCCL (pip install 'burn-py[cuda]'): {err}"
        ) from None
    return cupy, nccl


#: burn's cap on NCCL's channels (`NCCL_MAX_NCHANNELS`) unless the user set NCCL's own variable
CHANNELS_ENV = "BURN_NCCL_MAX_CHANNELS"
DEFAULT_CHANNELS = 8


def nccl_channel_env(environ) -> dict:
    """The NCCL variables to set before a communicator is made: `NCCL_MAX_NCHANNELS` from
    `$BURN_NCCL_MAX_CHANNELS` (default 8; 0 leaves NCCL's own choice), unless
    `NCCL_MAX_NCHANNELS` is set already (the user's wins).

    Why 8: on 2 H200s (NVLink) the d_model-1024 transformer of benches/collective ran 1.938x
    one GPU with NCCL's default channels and 1.953-1.954x with 4 or 8 (`run_x2.sh channels`):
    the buckets' all-reduce overlaps the backward pass, whose kernels lose the SMs NCCL's
    channels occupy; 288 MiB all-reduce takes ~1 ms either way, well inside the pass.

    Raises:
        ValueError: `$BURN_NCCL_MAX_CHANNELS` is not a whole number >= 0.
    """
    if "NCCL_MAX_NCHANNELS" in environ:
        return {}
    raw = environ.get(CHANNELS_ENV, str(DEFAULT_CHANNELS)).strip()
    if not raw.isdigit():
        raise ValueError(
            f"{CHANNELS_ENV} must be a whole number >= 0 (0: NCCL's choice), got {raw!r}"
        )
    return {} if int(raw) == 0 else {"NCCL_MAX_NCHANNELS": str(int(raw))}


def _uid_bytes(uid) -> np.ndarray:
    """NCCL's unique id (bytes, or a tuple of C chars) as 128 unsigned bytes."""
    if isinstance(uid, bytes | bytearray):
        return np.frombuffer(bytes(uid), np.uint8).copy()
    return np.array(uid, np.int64).astype(np.int8).view(np.uint8)


class NcclGroup:
    """This process's NCCL communicator, built over an existing `ProcessGroup` (rendezvous)."""

    def __init__(self, store: ProcessGroup, device_id: int | None = None) -> None:
        os.environ["NCCL_NVLS_ENABLE"] = "0"
        os.environ.update(nccl_channel_env(os.environ))
        cupy, nccl = _cupy()
        self._cupy, self._nccl = cupy, nccl
        self.rank, self.world_size = store.rank, store.world_size
        self.store = store
        count = max(1, cupy.cuda.runtime.getDeviceCount())
        # One GPU per local rank; with fewer GPUs than ranks, ranks share them round-robin
        # (NCCL itself may refuse two ranks on one GPU: its error is raised as it is).
        self.device_id = (store.rank if device_id is None else device_id) % count
        cupy.cuda.Device(self.device_id).use()
        uid = np.zeros(128, np.uint8)
        if store.rank == 0:
            uid = _uid_bytes(nccl.get_unique_id())
        uid = store.broadcast_array(uid, 0)
        try:  # cupy 14 takes the id as bytes; older releases as a tuple of C chars
            self._comm = nccl.NcclCommunicator(self.world_size, bytes(uid), self.rank)
        except TypeError:
            signed = tuple(int(b) for b in uid.view(np.int8))
            self._comm = nccl.NcclCommunicator(self.world_size, signed, self.rank)

    def _to_cupy(self, tensor: Any):
        cp = self._cupy
        if hasattr(tensor, "__dlpack__"):
            try:
                return cp.from_dlpack(tensor), True
            except Exception:  # noqa: BLE001 - a host tensor's DLPack is not a GPU array
                pass
        return cp.asarray(np.ascontiguousarray(tensor.to_data().numpy())), False

    def _back(self, tensor: Any, arr, on_gpu: bool) -> Any:
        from burn_tensor import Tensor

        if on_gpu and hasattr(Tensor, "from_dlpack"):
            return Tensor.from_dlpack(arr, tensor.device)
        return Tensor.from_data(self._cupy.asnumpy(arr), tensor.device, tensor.dtype)

    def _dtype(self, arr) -> int:
        name = _DTYPES.get(arr.dtype.name)
        if name is None:
            raise CollectiveError(f"NCCL has no data type for {arr.dtype}")
        return getattr(self._nccl, name)

    def all_reduce(self, tensor: Any, op: str = "sum") -> Any:
        arr, on_gpu = self._to_cupy(tensor)
        out = self.all_reduce_array(self._cupy.ascontiguousarray(arr), op)
        # A GPU result stays queued on the stream the next ops run on: no wait. Host tensors
        # are read back by `_back` (a copy that waits).
        return self._back(tensor, out, on_gpu)

    def all_reduce_array(self, arr, op: str = "sum"):
        """NCCL all-reduce of a cupy array (returned as a new cupy array): the bandwidth path."""
        check_op(op)
        cp, nccl = self._cupy, self._nccl
        out = cp.empty_like(arr)
        stream = cp.cuda.get_current_stream()
        self._comm.allReduce(
            arr.data.ptr, out.data.ptr, arr.size, self._dtype(arr), nccl.NCCL_SUM, stream.ptr
        )
        if op == "mean":
            out /= self.world_size
        return out

    def all_reduce_async(self, tensor: Any, op: str = "sum"):
        """Start the all-reduce on a second stream (made once per group) after the caller's
        stream has produced `tensor`; `wait()` makes the caller's stream wait for the result
        (the host does not wait). Reductions keep their start order: one side stream."""
        from ._async import done

        check_op(op)
        cp = self._cupy
        arr, on_gpu = self._to_cupy(tensor)
        arr = cp.ascontiguousarray(arr)
        if not on_gpu:  # a host tensor is copied back anyway: nothing to overlap
            return done(self._back(tensor, self.all_reduce_array(arr, op), False))
        if getattr(self, "_side", None) is None:
            self._side = cp.cuda.Stream(non_blocking=True)
        caller = cp.cuda.get_current_stream()
        ready = caller.record()
        self._side.wait_event(ready)
        with self._side:  # all_reduce_array runs on the current stream: the side one here
            out = self.all_reduce_array(arr, op)
        finished = self._side.record()
        return _NcclWork(self, tensor, arr, out, finished)

    def broadcast(self, tensor: Any, root: int = 0) -> Any:
        cp = self._cupy
        arr, on_gpu = self._to_cupy(tensor)
        arr = cp.ascontiguousarray(arr)
        stream = cp.cuda.get_current_stream()
        self._comm.bcast(arr.data.ptr, arr.size, self._dtype(arr), root, stream.ptr)
        stream.synchronize()
        return self._back(tensor, arr, on_gpu)

    def all_gather(self, tensor: Any) -> list[Any]:
        cp = self._cupy
        arr, on_gpu = self._to_cupy(tensor)
        arr = cp.ascontiguousarray(arr)
        out = cp.empty((self.world_size,) + arr.shape, arr.dtype)
        stream = cp.cuda.get_current_stream()
        self._comm.allGather(arr.data.ptr, out.data.ptr, arr.size, self._dtype(arr), stream.ptr)
        # No host wait (as all_reduce): GPU results stay queued on the stream the next ops run
        # on (the sharded optimizer all-gathers parameters every step: a wait there made the
        # GPU idle while the host queued the next step); host tensors are read back by `_back`
        # (a copy that waits). `arr`'s memory returns to cupy's pool, whose next use on this
        # stream is ordered after the gather.
        return [self._back(tensor, out[r], on_gpu) for r in range(self.world_size)]

    def barrier(self) -> None:
        self.store.barrier()

    def close(self) -> None:
        self._comm.destroy()
        self.store.close()

    def __repr__(self) -> str:
        return f"NcclGroup(rank={self.rank}, world_size={self.world_size}, gpu={self.device_id})"


class _NcclWork:
    """An all-reduce queued on the side stream. `arr` (the input) is kept alive until `wait()`
    orders the caller's stream after the reduction, so its memory is not reused while NCCL
    still reads it."""

    def __init__(self, group: NcclGroup, tensor: Any, arr, out, finished) -> None:
        self._group, self._tensor, self._arr, self._out = group, tensor, arr, out
        self._finished = finished

    def is_completed(self) -> bool:
        return self._finished.done

    def wait(self) -> Any:
        self._group._cupy.cuda.get_current_stream().wait_event(self._finished)
        self._arr = None
        return self._group._back(self._tensor, self._out, True)
