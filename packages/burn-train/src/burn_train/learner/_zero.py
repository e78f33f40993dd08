"""Sharded optimizer state (ZeRO stage 1): each rank keeps and updates the optimizer state of
about 1/N of the parameters (by bytes), then the updated parameters are all-gathered.

Every rank still computes the whole gradient and all-reduces it (as plain data parallel), so
the update of a parameter is computed from the same gradient and the same state as plain data
parallel would, only on one rank: the parameters equal plain data parallel's. What moves away is
the optimizer state (Adam: two moments per parameter, 2x the parameters' bytes): each rank holds
its owned parameters' state only.

Ownership: parameters in field order, largest first, each to the least-loaded rank (ties: the
lower rank, then the earlier parameter), a plan every rank computes alike.

Checkpoints store the shards: `shard_record()` is this rank's state keyed by parameter path
(`"linear1.weight"`; ParamIds differ between processes), with the world size and rank;
`load_shards(records)` merges any number of shards (saved by any number of ranks) and keeps
the entries this rank owns now, so a run saved on 2 ranks resumes on 3.

Example: `zero = ShardedOptimizer(optim, comm); model = zero.step(lr, model, params, summed)`.
"""

from __future__ import annotations

from typing import Any

from burn_optim import GradientsParams


SHARD_ENV = "BURN_DDP_SHARD_OPTIM"


def shard_optim_from_env() -> bool:
    """`$BURN_DDP_SHARD_OPTIM`: 1 shards the optimizer state of a launched Learner (default 0)."""
    import os

    raw = os.environ.get(SHARD_ENV, "0")
    if raw not in ("0", "1"):
        raise ValueError(f"{SHARD_ENV} must be 0 or 1, got {raw!r}")
    return raw == "1"


def plan_owners(sizes: list[int], world: int) -> list[int]:
    """The owning rank of each parameter (by its byte size): largest first to the least-loaded
    rank."""
    load = [0] * world
    owner = [0] * len(sizes)
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        r = min(range(world), key=lambda r: (load[r], r))
        owner[i] = r
        load[r] += sizes[i]
    return owner


def _nbytes(record: Any) -> int:
    """Bytes of the tensors in an optimizer record (TensorData leaves)."""
    if isinstance(record, dict):
        return sum(_nbytes(v) for v in record.values())
    if isinstance(record, list | tuple):
        return sum(_nbytes(v) for v in record)
    data = getattr(record, "bytes", None)
    if isinstance(data, bytes | bytearray | memoryview):
        return len(data)
    to_numpy = getattr(record, "to_numpy", None) or getattr(record, "numpy", None)
    return int(to_numpy().nbytes) if callable(to_numpy) else 0


class _Set:
    """Module mapper: parameter values by ParamId."""

    def __init__(self, values: dict) -> None:
        self.values = values

    def map(self, id: Any, tensor: Any) -> Any:
        from burn_tensor import Tensor

        new = self.values.get(id)
        return tensor if new is None else Tensor.from_inner(new, tensor.device)


class ShardedOptimizer:
    """This rank's share of an optimizer (see module doc); `optim` is this rank's optimizer."""

    def __init__(self, optim: Any, comm: Any) -> None:
        self.optim, self.comm = optim, comm
        self.rank, self.world = comm.rank, comm.world_size
        self._owners: tuple[tuple, list[int]] | None = None

    def owners(self, params: list[Any]) -> list[int]:
        key = tuple(tuple(p.val().dims()) for p in params)
        if self._owners is None or self._owners[0] != key:
            sizes = [p.val().numel() * p.val().dtype.size for p in params]
            self._owners = (key, plan_owners(sizes, self.world))
        return self._owners[1]

    def step(
        self, lr: float, model: Any, params: list[Any], summed: list[Any], times: Any = None
    ) -> Any:
        """Update the owned parameters with their (all-reduced) gradients, then all-gather
        every parameter from its owner. `params`, `summed`: trainable parameters in field order
        and their summed gradients. `times` (a `StepTimes`): the update laps `optimizer`, the
        all-gather `collective`."""
        from burn_tensor import Tensor

        owner = self.owners(params)
        grads = GradientsParams()
        for p, g, r in zip(params, summed, owner, strict=True):
            if r == self.rank:
                grads.register(p.id, g)
        if len(grads):
            model = self.optim.step(lr, model, grads)
        if times is not None:
            times.lap("optimizer")
        current = dict(model.named_parameters())
        names = {p.id: n for n, p in current.items()}
        inner = [current[names[p.id]].val().inner() for p in params]
        values: dict = {}
        for dtype in sorted({str(t.dtype) for t in inner}):
            idx = [i for i, t in enumerate(inner) if str(t.dtype) == dtype]
            per_rank = [[i for i in idx if owner[i] == r] for r in range(self.world)]
            lengths = [sum(inner[i].numel() for i in mine) for mine in per_rank]
            width = max(lengths)
            if width == 0:
                continue
            mine = per_rank[self.rank]
            like = inner[idx[0]]
            pieces = [inner[i].reshape([-1]) for i in mine]
            if lengths[self.rank] < width:  # every rank sends the same shape
                pieces.append(Tensor.zeros([width - lengths[self.rank]], like.device, dtype=like.dtype))
            flat = Tensor.cat(pieces, 0) if len(pieces) > 1 else pieces[0]
            gathered = self.comm.all_gather(flat)
            for r, their in enumerate(per_rank):
                if not their or r == self.rank:  # this rank's own: the optimizer's results
                    continue
                sizes = [inner[i].numel() for i in their]
                rest = width - sum(sizes)
                parts = gathered[r].split_with_sizes(sizes + ([rest] if rest else []), 0)
                for i, part in zip(their, parts, strict=False):
                    # A tensor of its own (x * 1 is exact: the same bits), not a view that
                    # would keep the whole gathered buffer alive into the next step: the
                    # buffers of two steps then overlapped (the pool grew by the parameters'
                    # size, more than the optimizer state sharding saved on 2 H200s).
                    values[params[i].id] = part.reshape(inner[i].dims()) * 1
        model = model.map(_Set(values))
        if times is not None:
            times.lap("collective")
        return model

    # -- state, checkpoints ------------------------------------------------------------------------

    def state_bytes(self) -> int:
        """Bytes of optimizer state this rank holds (measured on its record)."""
        return _nbytes(self.optim.to_record())

    def shard_record(self, model: Any) -> dict:
        """This rank's optimizer state keyed by parameter path, with the world size and rank."""
        record = self.optim.to_record()
        names = {str(p.id): n for n, p in model.named_parameters()}
        return {
            "world": self.world,
            "rank": self.rank,
            "state": {names[k]: v for k, v in record.items() if k in names},
        }

    def load_shards(self, model: Any, shards: list[dict]) -> None:
        """Load the state this rank owns now from `shards` (every rank's `shard_record()` of a
        checkpoint, from any world size).

        Raises:
            ValueError: the shards are not one complete set (a rank missing or repeated).
        """
        from ._parallel import _trainable

        merged = merge_shards(model, shards)
        params = _trainable(model)
        owner = self.owners(params)
        mine = {str(p.id) for p, r in zip(params, owner, strict=True) if r == self.rank}
        self.optim.load_record({k: v for k, v in merged.items() if k in mine})

    def keep_owned(self, model: Any) -> None:
        """Drop the state of parameters this rank does not own (after loading a whole record,
        e.g. a checkpoint of a run without sharding)."""
        names = {str(p.id): n for n, p in model.named_parameters()}
        whole = {names[k]: v for k, v in self.optim.to_record().items() if k in names}
        self.load_shards(model, [{"world": 1, "rank": 0, "state": whole}])


def merge_shards(model: Any, shards: list[dict]) -> dict:
    """The whole optimizer record (keyed by `model`'s ParamIds, as `to_record()`) from every
    rank's shard of one run.

    Raises:
        ValueError: the shards are not one complete set (a rank missing or repeated).
    """
    worlds = {s.get("world") for s in shards}
    ranks = sorted(s.get("rank") for s in shards)
    if len(worlds) != 1 or ranks != list(range(next(iter(worlds)))):
        raise ValueError(
            f"load_shards: expected the shards of every rank of one run, got ranks {ranks} "
            f"of world sizes {sorted(worlds, key=str)}"
        )
    by_path: dict = {}
    for s in shards:
        by_path.update(s["state"])
    return {str(p.id): by_path[n] for n, p in model.named_parameters() if n in by_path}
