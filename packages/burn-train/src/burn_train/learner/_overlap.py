"""Gradients reduced in buckets while the backward pass runs (torch DDP's overlap).

The trainable parameters are cut, in reverse field order (the order the backward pass tends to
finish them: the last layers first), into buckets of one dtype and about `bucket_bytes` each.
`burn_autodiff.grad_ready` reports each parameter's gradient as soon as it is final; when every
gradient of a bucket is in, the bucket is flattened and its all-reduce started
(`all_reduce_async`: a background thread on TCP, a second stream on NCCL), while the pass goes
on with earlier layers. Buckets are started strictly in bucket order (a bucket completed early
waits for the ones before it), so every rank issues the same collectives in the same order.
`finish()` fills the gradients the pass did not produce (a rank with no items, a parameter the
forward did not reach) with zeros, starts the remaining buckets and waits for all of them: the
optimizer waits only for what is still in flight.

Each element's sum is the one the non-overlapped `all_reduce_flat` computes (the same weighted
gradients, added in rank order), so the results are bitwise the same as without overlap.

Restriction (as torch DDP's): the gradients reduced are those backward() produced; a
`train_step` that changes its gradients after backward() must run without overlap
(`BURN_DDP_BUCKET_MB=0`).
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Any

DEFAULT_BUCKET_MB = 25.0
BUCKET_ENV = "BURN_DDP_BUCKET_MB"


def bucket_mb_from_env() -> float:
    """`$BURN_DDP_BUCKET_MB` (default 25; 0 turns the overlap off)."""
    raw = os.environ.get(BUCKET_ENV, "")
    if not raw:
        return DEFAULT_BUCKET_MB
    try:
        mb = float(raw)
    except ValueError:
        raise ValueError(f"{BUCKET_ENV} must be a number of MB (0: no overlap), got {raw!r}") from None
    if not mb >= 0:
        raise ValueError(f"{BUCKET_ENV} must be >= 0, got {raw!r}")
    return mb


def plan_buckets(params: list[Any], bucket_bytes: int) -> list[list[int]]:
    """Indices of `params` per bucket: reverse order, one dtype per bucket, a new bucket when
    the next parameter would take it past `bucket_bytes` (a larger parameter is a bucket of its
    own)."""
    buckets: list[list[int]] = []
    size, dtype = 0, None
    for i in reversed(range(len(params))):
        t = params[i].val()
        n = t.numel() * t.dtype.size
        if not buckets or t.dtype != dtype or size + n > bucket_bytes:
            buckets.append([])
            size, dtype = 0, t.dtype
        buckets[-1].append(i)
        size += n
    return buckets


class CollectiveTimer:
    """Seconds a rank spent blocked on gradient collectives, and the steps they cover."""

    def __init__(self) -> None:
        self.wait_s = 0.0
        self.steps = 0

    def per_step_ms(self) -> float:
        return 1000.0 * self.wait_s / self.steps if self.steps else 0.0

    def summary(self) -> str:
        return (
            f"waiting on collectives: {self.per_step_ms():.2f} ms/step "
            f"({self.wait_s:.3f} s over {self.steps} steps)"
        )


class _Step:
    """One step's buckets in flight."""

    def __init__(self, comm, params, weight, buckets, timer, times=None) -> None:
        self.comm, self.params, self.weight = comm, params, weight
        self.buckets, self.timer = buckets, timer
        self.times = times  # StepTimes: `forward` ends at the first gradient
        self.local: list[Any] = [None] * len(params)
        self.bucket_of = {i: b for b, idx in enumerate(buckets) for i in idx}
        self.missing = [len(idx) for idx in buckets]
        self.next = 0  # the next bucket to start
        self.works: list[Any] = []

    def ready(self, i: int, grad: Any) -> None:
        if self.local[i] is not None:
            name = getattr(self.params[i], "id", i)
            raise RuntimeError(
                f"gradient overlap: parameter {name} got a second gradient in one step: "
                "train_step ran backward() more than once, and its bucket was already being "
                "reduced; reduce after the pass instead (BURN_DDP_BUCKET_MB=0)"
            )
        if self.times is not None:  # the first gradient: the forward pass is over
            self.times.lap("forward")
            self.times = None
        self.local[i] = grad  # weighted per bucket, after flattening (one op, not one each)
        self.missing[self.bucket_of[i]] -= 1
        self._start_ready()

    def _start_ready(self) -> None:
        while self.next < len(self.buckets) and self.missing[self.next] == 0:
            self.works.append(self._start(self.buckets[self.next]))
            self.next += 1

    def _start(self, idx: list[int]) -> Any:
        from burn_tensor import Tensor
        from burn_tensor.collective import all_reduce_async

        if len(idx) == 1:
            flat = self.local[idx[0]]
        else:
            flat = Tensor.cat([self.local[i].reshape([-1]) for i in idx], 0)
        if self.weight != 1.0:  # the same product per element as weighting each gradient
            flat = flat * self.weight
        return all_reduce_async(flat, self.comm, "sum")

    def finish(self) -> list[Any]:
        """Zeros for what the pass did not produce, the remaining buckets started, every
        reduction waited for; the summed gradients in parameter order."""
        for i, g in enumerate(self.local):
            if g is None:
                self.local[i] = self.params[i].val().inner().zeros_like()
                self.missing[self.bucket_of[i]] -= 1
        self._start_ready()
        out: list[Any] = [None] * len(self.params)
        start = time.perf_counter()
        for idx, work in zip(self.buckets, self.works, strict=True):
            summed = work.wait()
            if len(idx) == 1:
                out[idx[0]] = summed
                continue
            sizes = [self.local[i].numel() for i in idx]
            for i, part in zip(idx, summed.split_with_sizes(sizes, 0), strict=True):
                out[i] = part.reshape(self.local[i].dims())
        self.timer.wait_s += time.perf_counter() - start
        self.timer.steps += 1
        self.local = []
        return out


class BucketReducer:
    """Reduces a step's gradients bucket by bucket during its backward pass (see module doc)."""

    def __init__(self, comm: Any, bucket_mb: float = DEFAULT_BUCKET_MB) -> None:
        if not bucket_mb > 0:
            raise ValueError(f"BucketReducer: bucket_mb must be > 0, got {bucket_mb!r}")
        self.comm = comm
        self.bucket_bytes = int(bucket_mb * 1024 * 1024)
        self.timer = CollectiveTimer()
        self._plan: tuple[tuple, list[list[int]]] | None = None

    def _buckets(self, params: list[Any]) -> list[list[int]]:
        key = tuple((tuple(p.val().dims()), str(p.val().dtype)) for p in params)
        if self._plan is None or self._plan[0] != key:
            self._plan = (key, plan_buckets(params, self.bucket_bytes))
        return self._plan[1]

    @contextmanager
    def step(self, params: list[Any], weight: float, times: Any = None):
        """Within the block (the rank's forward and backward), gradients of `params` are
        reduced as they become final; the yielded object's `finish()` returns the sums.
        `times` (a `StepTimes`) gets its `forward` lap at the first gradient."""
        pending = _Step(self.comm, params, weight, self._buckets(params), self.timer, times)
        if not params:
            yield pending
            return
        tensors = [p.val() for p in params]
        # The Autodiff backend's grad_ready (burn_autodiff.grad_ready): burn-train does not
        # import burn_autodiff; trainable parameters live on an Autodiff device.
        with tensors[0].device.backend.grad_ready(tensors, pending.ready):
            yield pending


def report_wait(timer: CollectiveTimer, rank: int | None) -> dict:
    """Print this rank's time waiting on collectives (stderr) and, under the launcher, leave it
    in `$BURN_LAUNCH_DIR/collective-rank-R.json` for the launcher's end-of-job summary.
    Returns {"rank", "steps", "wait_s", "ms_per_step"}."""
    import json
    import sys

    stats = {
        "rank": rank if rank is not None else 0,
        "steps": timer.steps,
        "wait_s": timer.wait_s,
        "ms_per_step": timer.per_step_ms(),
    }
    who = "devices of this process" if rank is None else f"rank {rank}"
    line = f"burn-train: {who}: {timer.summary()}\n"
    try:  # one write per line: print's text and newline can interleave with another rank's
        sys.stderr.flush()
        os.write(sys.stderr.fileno(), line.encode())
    except (AttributeError, OSError, ValueError):  # a stderr without a descriptor (captured)
        sys.stderr.write(line)
    where = os.environ.get("BURN_LAUNCH_DIR")
    if where and rank is not None:
        from burn_record import atomic_write

        data = json.dumps(stats).encode("utf-8")
        path = os.path.join(where, f"collective-rank-{rank}.json")
        atomic_write(path, lambda f: f.write(data))
    return stats
