"""Data-parallel training steps: one model replica per rank, gradients all-reduced, identical
optimizer steps everywhere.

Every rank runs `train_step` on its share of the global batch, weights its gradients by its
share of the items (`items / total`), all-reduces them (sum, in rank order, so every rank gets
bitwise the same gradient) and applies its own optimizer to its own replica. The replicas start
equal and receive equal updates, so they stay equal without broadcasting parameters, and the
update equals one device's on the whole batch (up to float summation order).

Two `Strategy`s (see `_strategy.py`) share `rank_step`:
- `ThreadedDataParallel`: several devices of one process (`LearnerBuilder.devices([...])`),
  one thread per device, a `ThreadGroup`;
- `ProcessDataParallel`: one process per device (`python -m burn_train.launch`), over the
  communicator `init_process_group()` returns (TCP or NCCL).
"""

from __future__ import annotations

import copy
import threading
import time
from pathlib import Path
from collections.abc import Iterator
from typing import Any

from burn_optim import GradientsParams
from burn_tensor.collective import ThreadGroup

from ._overlap import BucketReducer, CollectiveTimer, bucket_mb_from_env
from ._protocols import Optimizer
from ._steptimes import StepTimes, forward_mark, lap
from ._zero import ShardedOptimizer, merge_shards, shard_optim_from_env
from ._strategy import LossCheck, optim_step, start_epoch


SHARDS = "optim-shards"  # beside the checkpoint records: one folder per epoch
#: training steps between two agreements of the ranks to stop (see `ProcessDataParallel`)
AGREE_EVERY = 8


class _FloatParams:
    """A module visitor collecting float parameters."""

    def __init__(self) -> None:
        self.params: list[Any] = []

    def visit_float(self, param: Any) -> None:
        self.params.append(param)

    def visit_int(self, param: Any) -> None:
        pass

    def visit_bool(self, param: Any) -> None:
        pass


def _trainable(model: Any) -> list[Any]:
    """The float parameters that take gradients, in field order (`named_parameters`): the same
    on every rank, whose parameter ids differ when each process built its own model."""
    found = _FloatParams()
    model.visit(found)
    floats = {id(p) for p in found.params}
    return [
        p
        for _, p in model.named_parameters()
        if id(p) in floats and p.require_grad and p.val().device.backend.is_autodiff
    ]


class _FromRoot:
    """A module mapper replacing every parameter by rank 0's (field order on every rank)."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm

    def map(self, id: Any, tensor: Any) -> Any:
        from burn_tensor.collective import broadcast

        return broadcast(tensor, self.comm, 0)


def sync_from_root(model: Any, comm: Any) -> Any:
    """`model` with rank 0's parameter values on every rank (each process built and
    initialised its own; its random initialisation need not match rank 0's)."""
    return model.map(_FromRoot(comm))


def rank_step(
    comm: Any,
    model: Any,
    optim: Optimizer,
    lr: float,
    shard: Any,
    check: LossCheck | None = None,
    reducer: BucketReducer | None = None,
    timer: CollectiveTimer | None = None,
    sharded: ShardedOptimizer | None = None,
    times: StepTimes | None = None,
) -> tuple[Any, Any]:
    """One rank's step: forward/backward on its shard, weighted all-reduce, optimizer step.
    Returns (new model, metrics item or None when the rank had no items).

    Every rank all-reduces one gradient per trainable parameter, in the same order: a rank
    with no items (the last batch can be smaller than the number of ranks), or a parameter its
    forward did not reach, contributes zeros. With a `reducer` the gradients are reduced in
    buckets while the backward pass runs (`_overlap.py`); without, after it, batched by
    `all_reduce_flat`. Both give bitwise the same sums. `timer` (or the reducer's) accumulates
    the time spent waiting on the reduction; `times` (a `StepTimes`) the step's phases."""
    weight = shard.items / shard.total
    params = _trainable(model)
    item = None
    if reducer is not None:
        with reducer.step(params, weight, times) as pending:
            if shard.items:
                item = model.train_step(shard.batch).item
        lap(times, "backward")
        summed = pending.finish()
        lap(times, "collective")
    else:
        grads = None
        with forward_mark(times, params):
            if shard.items:
                output = model.train_step(shard.batch)
                grads, item = output.grads, output.item
        local = []
        for p in params:
            g = grads.get(p.id) if grads is not None else None
            local.append(p.val().inner().zeros_like() if g is None else g)
        lap(times, "backward")
        start = time.perf_counter()
        summed = all_reduce_flat(local, comm, weight)
        if timer is not None:
            timer.wait_s += time.perf_counter() - start
            timer.steps += 1
        lap(times, "collective")
    if check is not None and item is not None:
        # Before any update, so a bad loss leaves the model intact; after the all-reduce is
        # queued, so the GPU has it to run while the host waits here for the loss.
        check(item)
        lap(times, "loss_check")
    if sharded is not None:  # ZeRO-1: update the owned share, all-gather the parameters
        return sharded.step(lr, model, params, summed, times), item
    reduced = GradientsParams()
    for p, g in zip(params, summed, strict=True):
        reduced.register(p.id, g)
    model = optim_step(optim, lr, model, reduced)
    lap(times, "optimizer")
    return model, item


def all_reduce_flat(tensors: list[Any], comm: Any, weight: float = 1.0) -> list[Any]:
    """Sum of every tensor (times this rank's `weight`) over the ranks, as one all-reduce per
    dtype (not one per tensor).

    Shapes: each tensor keeps its own. The tensors of a dtype are flattened and concatenated,
    weighted (one multiply on the flat tensor, not one per tensor: the same product per
    element), reduced together and split back: a model's ~100 gradients cost one NCCL call (or
    one TCP round) instead of ~100, each with its own launch (or round trip). Elementwise the
    sums are the same as one call per tensor, so every rank still gets the same bits.

    Example: `a, b = all_reduce_flat([ga, gb], comm)`."""
    from burn_tensor import Tensor
    from burn_tensor.collective import all_reduce

    out: list[Any] = [None] * len(tensors)
    groups: dict[Any, list[int]] = {}
    for i, t in enumerate(tensors):
        groups.setdefault(t.dtype, []).append(i)
    for idx in groups.values():
        if len(idx) == 1:
            one = tensors[idx[0]]
            out[idx[0]] = all_reduce(one * weight if weight != 1.0 else one, comm, "sum")
            continue
        sizes = [tensors[i].numel() for i in idx]
        flat = Tensor.cat([tensors[i].reshape([-1]) for i in idx], 0)
        if weight != 1.0:
            flat = flat * weight
        parts = all_reduce(flat, comm, "sum").split_with_sizes(sizes, 0)
        for i, part in zip(idx, parts, strict=True):
            out[i] = part.reshape(tensors[i].dims())
    return out


class ThreadedDataParallel:
    """Replicas of `model` and `optim` on `devices`, stepped together by one thread each."""

    needs_eager_check = True  # every rank checks before the collective update
    rank = None  # every rank is a thread of this process
    times: StepTimes | None = None  # rank 0's phases (set by the loop when timing is on)

    def __init__(self, model: Any, optim: Optimizer, devices: list[Any]) -> None:
        if len(devices) < 2:
            raise ValueError("ThreadedDataParallel needs at least two devices")
        self.devices = list(devices)
        self.group = ThreadGroup(self.devices)
        self.comms = [self.group.communicator(r) for r in range(len(devices))]
        self.timer = CollectiveTimer()  # rank 0's waits (the ranks wait for each other)
        self.set_state(model, optim)

    def set_state(self, model: Any, optim: Any) -> None:
        """(Re)place every replica from `model` and `optim` (at the start, and on resume)."""
        self.models = [model.fork(d) for d in self.devices]
        self.optims = [optim] + [copy.deepcopy(optim) for _ in self.devices[1:]]

    @property
    def model(self) -> Any:
        """Rank 0's replica: what is validated, checkpointed and returned."""
        return self.models[0]

    @property
    def optim(self) -> Any:
        return self.optims[0]

    def batches(self, loader: Any, epoch: int) -> Iterator[list[Any]]:
        """Each batch split into one shard per device (a burn DataLoader's `iter_shards`)."""
        set_epoch = getattr(loader, "set_epoch", None)
        if callable(set_epoch):
            set_epoch(epoch - 1)
        if not callable(getattr(loader, "iter_shards", None)):
            raise TypeError(
                f"training on several devices needs a burn DataLoader (iter_shards), got "
                f"{type(loader).__name__}"
            )
        return loader.iter_shards(self.devices)

    def agree(self, flag: bool) -> bool:
        return flag  # one process: its interrupter is every rank's

    def barrier(self) -> None:
        pass

    def step(self, lr: float, shards: list[Any], check: LossCheck | None = None) -> list[Any]:
        """One step on every rank; returns the metric items of the ranks that had items."""
        if len(shards) != len(self.devices):
            raise ValueError(f"step: {len(shards)} shards for {len(self.devices)} devices")
        n = len(self.devices)
        items: list[Any] = [None] * n
        errors: list[BaseException | None] = [None] * n

        def run(r: int) -> None:
            try:
                self.models[r], items[r] = rank_step(
                    self.comms[r], self.models[r], self.optims[r], lr, shards[r], check,
                    timer=self.timer if r == 0 else None,
                    times=self.times if r == 0 else None,
                )
            except BaseException as err:  # noqa: BLE001 - re-raised by the caller below
                errors[r] = err
                self.group.abort(f"rank {r} failed: {type(err).__name__}: {err}")

        threads = [
            threading.Thread(target=run, args=(r,), name=f"burn-dp-{r}", daemon=True)
            for r in range(1, n)
        ]
        for t in threads:
            t.start()
        run(0)
        for t in threads:
            t.join()
        first = next((e for e in errors if e is not None and not _is_abort(e)), None)
        first = first or next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        return [i for i in items if i is not None]


def _is_abort(err: BaseException) -> bool:
    from burn_tensor.collective import CollectiveError

    return isinstance(err, CollectiveError)


class ProcessDataParallel:
    """This process's replica in a multi-process group (`comm` from `init_process_group`).

    With `gather`, rank 0 gets every rank's metric item each step (see `_gather`), the others
    theirs; without (no training metric registered: each gather waits for the device), every
    rank keeps its own."""

    #: the loss is checked as on one device: each step when values are read each step, else
    #: when a batch of `read_every` steps is read (a GPU's default), so that the host does not
    #: wait for the device every step (the error's model is then the one before that batch; a
    #: rank that raises fails the launch, which stops the others)
    needs_eager_check = False
    times: StepTimes | None = None  # this rank's phases (set by the loop when timing is on)
    #: steps between the ranks' agreements whether to stop (`agree`: a TCP round trip and a
    #: wait for the slowest rank, ~1 ms a step on 2 loaded cores): a Ctrl-C stops within them
    agree_every = AGREE_EVERY

    def __init__(
        self,
        model: Any,
        optim: Optimizer,
        comm: Any,
        gather: bool = True,
        bucket_mb: float | None = None,
        shard_optimizer: bool | None = None,
    ) -> None:
        """`bucket_mb`: size of the gradient buckets reduced during the backward pass (default
        `$BURN_DDP_BUCKET_MB`, else 25); 0 reduces every gradient after the pass instead.
        `shard_optimizer`: ZeRO stage 1, each rank keeps 1/N of the optimizer state
        (`self.sharded`, see `_zero.py`; default `$BURN_DDP_SHARD_OPTIM=1`)."""
        self.comm, self.rank, self.gather = comm, comm.rank, gather
        self.model, self.optim = sync_from_root(model, comm), optim
        mb = bucket_mb_from_env() if bucket_mb is None else bucket_mb
        self.reducer = BucketReducer(comm, mb) if mb > 0 else None
        self.timer = self.reducer.timer if self.reducer is not None else CollectiveTimer()
        if shard_optimizer is None:
            shard_optimizer = shard_optim_from_env()
        self.sharded = ShardedOptimizer(optim, comm) if shard_optimizer else None
        if self.sharded is not None:
            self.sharded.keep_owned(self.model)  # a resumed whole record: keep this rank's part

    def batches(self, loader: Any, epoch: int) -> Iterator[Any]:
        return start_epoch(loader, epoch)  # the loader is already this rank's shard

    def barrier(self) -> None:
        self.comm.barrier()

    def set_state(self, model: Any, optim: Any) -> None:
        self.model, self.optim = model, optim
        if self.sharded is not None:
            self.sharded.optim = optim

    # -- sharded optimizer state in checkpoints (`checkpoint/optim-shards/epoch-N/`) -------------

    def save_optimizer_shard(self, unit: Any, epoch: int) -> None:
        """Every rank writes its optimizer shard for `epoch` (with sharding; else nothing), all
        before rank 0 commits the checkpoint (called by every rank before it)."""
        if self.sharded is None:
            return
        import shutil

        root = Path(unit.directory) / SHARDS
        folder = root / f"epoch-{epoch}"
        if self.rank == 0:  # a re-save (another world size) must not mix with old shards
            shutil.rmtree(folder, ignore_errors=True)
            kept = set(unit.epochs_on_disk())
            for old in root.glob("epoch-*") if root.is_dir() else []:
                e = old.name.removeprefix("epoch-")
                if e.isdigit() and int(e) < epoch and int(e) not in kept:
                    shutil.rmtree(old, ignore_errors=True)  # its checkpoint was deleted
            folder.mkdir(parents=True, exist_ok=True)
        self.barrier()
        recorder = unit.files["optim"].recorder
        name = f"rank-{self.rank}-of-{self.comm.world_size}"
        recorder.record(self.sharded.shard_record(self.model), folder / name)
        self.barrier()

    def load_optimizer_shards(self, unit: Any, epoch: int) -> None:
        """After resuming from `epoch`: the optimizer state from its shards, this rank's part
        with sharding, the whole merged record without. A checkpoint without shards (saved
        without sharding) keeps the whole record already loaded (this rank's part of it)."""
        folder = Path(unit.directory) / SHARDS / f"epoch-{epoch}"
        files = sorted(folder.glob("rank-*-of-*")) if folder.is_dir() else []
        if not files:
            return
        recorder = unit.files["optim"].recorder
        shards = [recorder.load(f) for f in files]
        if self.sharded is not None:
            self.sharded.load_shards(self.model, shards)
        else:
            self.optim.load_record(merge_shards(self.model, shards))

    def agree(self, flag: bool) -> bool:
        """True on every rank if `flag` is true on any: ranks stop at the same step (a Ctrl-C
        reaches each process at a slightly different moment), or one would wait forever in the
        next collective."""
        import numpy as np

        store = getattr(self.comm, "store", self.comm)  # NCCL's TCP side carries small values
        return bool(store.all_reduce_array(np.array([int(flag)], np.int64))[0])

    def step(self, lr: float, shard: Any, check: LossCheck | None = None) -> list[Any]:
        """One step; returns the metric items this rank renders."""
        from ._gather import gather_items

        self.model, item = rank_step(
            self.comm, self.model, self.optim, lr, shard, check, self.reducer, self.timer,
            self.sharded, self.times,
        )
        if not self.gather:
            return [item] if item is not None else []
        items = gather_items(self.comm, item)
        if items is None:
            items = [item]
        return [i for i in items if i is not None]
