"""Sharded optimizer state (ZeRO stage 1, `_zero.py`) on TCP ranks (threads of this process,
real sockets): 2 ranks train 3 steps, save their shards through a recorder, 3 ranks load them
and train 3 more; the parameters equal one device's 6 plain steps within 1e-6, and each rank
holds only its share of Adam's state (measured: the shards add up to the whole, none
duplicated)."""

from __future__ import annotations

import secrets
import socket

import numpy as np
import pytest
from burn_backend_tests import run_ranks
from burn_dataset.dataloader._shard import Shard, shares
from burn_optim import AdamConfig
from burn_record import NamedMpkFileRecorder
from burn_tensor.collective import ProcessGroup
from burn_train.learner import ProcessDataParallel
from burn_train.learner._zero import _nbytes, plan_owners
from real_parts import AD, Batcher, init_model, make_items, params

BATCH, STEPS = 16, 6
HIDDEN = 64  # parameters of 1024, 256, 768, 12 bytes


def _comms(n):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    return run_ranks(
        n, lambda r: ProcessGroup.connect(r, n, "127.0.0.1", port, timeout=30, token=token)
    )


def _batches():
    items = make_items(BATCH * STEPS, 0)
    return [items[i * BATCH : (i + 1) * BATCH] for i in range(STEPS)]


def _one_device():
    model, optim = init_model(seed=0, d_hidden=HIDDEN), AdamConfig().init()
    for part in _batches():
        out = model.train_step(Batcher().batch(part, AD.device()))
        model = optim.step(1e-2, model, out.grads)
    return params(model), _nbytes(optim.to_record())


def _run(n, models, steps, shards=None):
    comms = _comms(n)

    def rank(r):
        dp = ProcessDataParallel(models[r], AdamConfig().init(), comms[r], False, 25.0, True)
        if shards is not None:
            dp.sharded.load_shards(dp.model, shards)
        for part in steps:
            a, b = shares(len(part), n)[r]
            batch = Batcher().batch(part[a:b], AD.device()) if b > a else None
            dp.step(1e-2, Shard(batch, b - a, len(part)))
        return dp.model, dp.sharded.shard_record(dp.model), dp.sharded.state_bytes()

    try:
        return run_ranks(n, rank)
    finally:
        for c in comms:
            c.close()


def test_two_ranks_resume_on_three_equal_plain_training(tmp_path):
    want, full_bytes = _one_device()
    batches = _batches()
    first = _run(2, [init_model(seed=r, d_hidden=HIDDEN) for r in range(2)], batches[:3])
    bytes2 = [b for _, _, b in first]
    recorder = NamedMpkFileRecorder()
    paths = [recorder.record(rec, tmp_path / f"optim-shard-{r}") for r, (_, rec, _) in
             enumerate(first)]  # fmt: skip
    shards = [recorder.load(p) for p in paths]
    models = [first[0][0]] + [init_model(seed=9, d_hidden=HIDDEN) for _ in range(2)]
    second = _run(3, models, batches[3:], shards)
    for r, (model, _, _) in enumerate(second):
        got = params(model)
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=0, atol=1e-6, err_msg=f"rank {r} {k}")
    # Adam's state: the ranks' shards add up to the whole (nothing duplicated), each a share.
    bytes3 = [b for _, _, b in second]
    print(f"optimizer state bytes: whole {full_bytes}, 2 ranks {bytes2}, 3 ranks {bytes3}")
    assert sum(bytes2) == full_bytes and sum(bytes3) == full_bytes
    assert max(bytes2) < 0.6 * full_bytes and max(bytes3) < 0.5 * full_bytes


def test_owner_plan_balances_bytes():
    assert plan_owners([1024, 256, 768, 12], 2) == [0, 1, 1, 0]  # loads 1036, 1024
    assert plan_owners([1024, 256, 768, 12], 3) == [0, 2, 1, 2]
    assert plan_owners([4] * 8, 4) == [0, 1, 2, 3, 0, 1, 2, 3]


def test_incomplete_shards_refused():
    from burn_train.learner._zero import ShardedOptimizer

    comm = ProcessGroup.connect(0, 1, "127.0.0.1", 0)
    try:
        z = ShardedOptimizer(AdamConfig().init(), comm)
        with pytest.raises(ValueError, match=r"every rank of one run, got ranks \[0\]"):
            z.load_shards(init_model(), [{"world": 2, "rank": 0, "state": {}}])
    finally:
        comm.close()
