"""Gradient buckets reduced during the backward pass (`_overlap.py`), on 2 and 3 TCP ranks
(threads of this process, real sockets): every bucket starts before backward() returns, and
the parameters after several Adam steps are bitwise those of the reduction after the pass, on
every rank, including a step where a rank has no items."""

from __future__ import annotations

import secrets
import socket

import numpy as np
import pytest
from burn_backend_tests import run_ranks
from burn_dataset.dataloader._shard import Shard, shares
from burn_optim import AdamConfig
from burn_tensor.collective import ProcessGroup
from burn_train.learner import ProcessDataParallel
from burn_train.learner._overlap import BucketReducer, bucket_mb_from_env, plan_buckets
from burn_train.learner._parallel import _trainable
from real_parts import AD, Batcher, init_model, make_items, params

TINY_MB = 200 / 2**20  # 200 bytes: each of the Mlp's 4 parameters is a bucket
BATCHES = [16, 16, 2, 16]  # the batch of 2 leaves a third rank without items


def _comms(n):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    return run_ranks(
        n, lambda r: ProcessGroup.connect(r, n, "127.0.0.1", port, timeout=30, token=token)
    )


def _train(n: int, bucket_mb: float) -> list[dict[str, np.ndarray]]:
    models = [init_model(seed=r) for r in range(n)]  # rank 0's reaches the others
    items = make_items(sum(BATCHES), 0)
    comms = _comms(n)
    batcher = Batcher()

    def rank(r):
        dp = ProcessDataParallel(models[r], AdamConfig().init(), comms[r], False, bucket_mb)
        at = 0
        for size in BATCHES:
            a, b = shares(size, n)[r]
            part = items[at + a : at + b]
            at += size
            batch = batcher.batch(part, AD.device()) if part else None
            dp.step(1e-2, Shard(batch, len(part), size))
        return params(dp.model), dp.timer.steps

    try:
        out = run_ranks(n, rank)
    finally:
        for c in comms:
            c.close()
    assert all(steps == len(BATCHES) for _, steps in out)
    return [p for p, _ in out]


@pytest.mark.parametrize("n", [2, 3])
def test_overlapped_buckets_bitwise_equal_to_reduction_after_backward(n):
    plain = _train(n, 0)
    overlapped = _train(n, TINY_MB)
    for r in range(n):
        for k in plain[0]:
            np.testing.assert_array_equal(overlapped[r][k], plain[0][k], err_msg=f"rank {r} {k}")
            np.testing.assert_array_equal(plain[r][k], plain[0][k])
    # Training moved the parameters away from their initial values.
    first = params(init_model(seed=0))
    assert any(np.max(np.abs(plain[0][k] - first[k])) > 1e-3 for k in first)


def test_every_bucket_starts_before_backward_returns():
    model = init_model()
    comm = ProcessGroup.connect(0, 1, "127.0.0.1", 0)
    reducer = BucketReducer(comm, TINY_MB)
    ps = _trainable(model)
    batch = Batcher().batch(make_items(8, 0), AD.device())
    try:
        with reducer.step(ps, 1.0) as pending:
            grads = model.train_step(batch).grads
            started = pending.next  # buckets already in flight when backward() has returned
        summed = pending.finish()
    finally:
        comm.close()
    assert len(pending.buckets) == 4 and started == 4
    for p, g in zip(ps, summed, strict=True):  # world size 1: the sum is the gradient
        np.testing.assert_array_equal(g.numpy(), grads.get(p.id).numpy())


def test_bucket_plan_reverse_order_capped():
    ps = _trainable(init_model())  # linear1.weight 256 B, bias 64 B, linear2.weight 192 B, bias 12 B
    assert plan_buckets(ps, 300) == [[3, 2, 1], [0]]  # 12 + 192 + 64 bytes, then 256
    assert plan_buckets(ps, 200) == [[3], [2], [1], [0]]
    assert plan_buckets(ps, 25 * 2**20) == [[3, 2, 1, 0]]


def test_bucket_env_checked(monkeypatch):
    monkeypatch.setenv("BURN_DDP_BUCKET_MB", "lots")
    with pytest.raises(ValueError, match="BURN_DDP_BUCKET_MB must be a number.*'lots'"):
        bucket_mb_from_env()
    monkeypatch.setenv("BURN_DDP_BUCKET_MB", "0")
    assert bucket_mb_from_env() == 0.0


def test_a_second_backward_in_one_step_is_refused():
    model = init_model()
    comm = ProcessGroup.connect(0, 1, "127.0.0.1", 0)
    reducer = BucketReducer(comm, TINY_MB)
    batch = Batcher().batch(make_items(8, 0), AD.device())
    try:
        with pytest.raises(RuntimeError, match="second gradient in one step.*BURN_DDP_BUCKET_MB=0"):
            with reducer.step(_trainable(model), 1.0):
                model.train_step(batch)
                model.train_step(batch)
    finally:
        comm.close()
