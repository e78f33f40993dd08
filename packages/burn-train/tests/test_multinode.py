"""Several hosts, simulated by two launchers on this host (`--nnodes 2 --node-rank 0|1`, 2 CPU
ranks each, one master address and port, one token): the 4 ranks train as one job and match
one process's parameters; when one node is killed (its launcher and ranks, SIGKILL), the other
node's launcher stops within a bounded time, naming the lost rank and its node, and the last
complete checkpoint loads (training resumes from it)."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CHILD = Path(__file__).with_name("multinode_child.py")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _nodes(out: Path, epochs: int, env: dict) -> list[subprocess.Popen]:
    port, token = _port(), secrets.token_hex(16)
    procs = []
    for node in (0, 1):
        cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", "2",
               "--nnodes", "2", "--node-rank", str(node), "--master-addr", "127.0.0.1",
               "--master-port", str(port), "--grace", "3", str(CHILD), str(out), str(epochs)]  # fmt: skip
        procs.append(subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **env, "BURN_COLLECTIVE_TOKEN": token},
            start_new_session=True,  # a "node": its launcher and ranks killed together
        ))  # fmt: skip
    return procs


def test_two_nodes_of_two_ranks_train_as_one_job(tmp_path):
    procs = _nodes(tmp_path / "mn", 1, {})
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    assert "done None" in outs[0][0]
    # Each launcher reports its own ranks' time waiting on the gradient collectives.
    assert "waiting on collectives per step (ms): rank 0 " in outs[0][1]
    assert "waiting on collectives per step (ms): rank 2 " in outs[1][1]
    params = dict(np.load(tmp_path / "mn" / "params.npz"))
    # The 4 replicas all stepped (rank 0's parameters moved); the values against one process
    # are checked by test_data_parallel (same reduction code); here: finite, trained.
    assert all(np.isfinite(v).all() for v in params.values())


def test_killing_one_node_stops_the_other_naming_it_and_last_checkpoint_loads(tmp_path):
    out = tmp_path / "mn"
    procs = _nodes(out, 6, {"MN_STEP_DELAY": "0.15"})
    try:
        _kill_node_1_after_epoch_1(out, procs)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            if p.stdout is not None and not p.stdout.closed:
                p.communicate()  # reaps it and closes its pipes (node 1 was killed)


def _kill_node_1_after_epoch_1(out: Path, procs: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + 60
    while not list((out / "checkpoint").glob("*-1.*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list((out / "checkpoint").glob("*-1.*")), "no epoch-1 checkpoint before the deadline"
    time.sleep(0.3)
    os.killpg(procs[1].pid, signal.SIGKILL)  # node 1: its launcher and ranks 2, 3
    start = time.monotonic()
    _, err = procs[0].communicate(timeout=60)
    took = time.monotonic() - start
    procs[1].wait()
    assert procs[0].returncode != 0
    assert took < 20, f"node 0 took {took:.1f} s to stop"
    assert "rank 2" in err or "rank 3" in err, err[-2000:]
    assert "node 1" in err, err[-2000:]
    # The newest complete checkpoint loads: one process resumes from it and finishes.
    run = subprocess.run(
        [sys.executable, str(CHILD), str(out), "7"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
    resumed = int(run.stdout.split("done ")[1].split()[0])
    assert resumed >= 1
