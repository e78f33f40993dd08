"""Start one process per device for data-parallel training.

    python -m burn_train.launch --nproc-per-node N script.py [args...]

Each child runs `script.py args...` with `BURN_RANK`, `BURN_LOCAL_RANK`, `BURN_WORLD_SIZE`,
`BURN_MASTER_ADDR` and `BURN_MASTER_PORT` set (a free port on this host unless given),
`BURN_COLLECTIVE_TOKEN` (the job's secret: only processes holding it can join the group) and
`NCCL_NVLS_ENABLE=0` (NVLink multicast stays off on shared machines). A `Learner` in such a
process joins the group by itself (`burn_tensor.collective.init_process_group`).

- The token: on one host, a fresh random one per launch, unless `BURN_COLLECTIVE_TOKEN` is
  already set (then that one is passed on). With `--nnodes > 1` every host's launcher must pass
  the same one, so it must be set (the launcher refuses to start otherwise). It is never
  printed; it reaches the ranks only through their environment.

- Ctrl-C (SIGINT) or SIGTERM is forwarded to every rank; a Learner stops at the end of its
  current step and keeps its checkpoints. Ranks still running after `--grace` seconds are killed.
- If a rank fails, the others are stopped the same way and the launcher exits with the failed
  rank's status, printing which rank failed first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m burn_train.launch",
        description="Run a training script as one process per device (data parallel).",
    )
    parser.add_argument(
        "--nproc-per-node", type=int, required=True, help="processes (devices) on this host"
    )
    parser.add_argument("--nnodes", type=int, default=1, help="hosts taking part (default 1)")
    parser.add_argument("--node-rank", type=int, default=0, help="this host's index (default 0)")
    parser.add_argument(
        "--master-addr", default="127.0.0.1", help="address of the host running rank 0"
    )
    parser.add_argument(
        "--master-port", type=int, default=0, help="port rank 0 listens on (0: a free one)"
    )
    parser.add_argument(
        "--grace", type=float, default=10.0, help="seconds ranks get to stop before they are killed"
    )
    parser.add_argument("script", help="the training script")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the script")
    return parser


def _free_port(addr: str) -> int:
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def job_token(nnodes: int) -> str | None:
    """The job's collective secret: `$BURN_COLLECTIVE_TOKEN`, else (one host) a fresh one;
    None when several hosts need one that was not given."""
    from burn_tensor.collective import TOKEN_ENV, new_token

    given = os.environ.get(TOKEN_ENV)
    if given:
        return given
    return new_token() if nnodes == 1 else None


def child_env(
    base: dict, rank: int, local: int, world: int, addr: str, port: int, token: str | None = None
) -> dict:
    """The environment of one rank."""
    env = dict(base)
    if token is not None:
        env["BURN_COLLECTIVE_TOKEN"] = token
    env.update(
        BURN_RANK=str(rank),
        BURN_LOCAL_RANK=str(local),
        BURN_WORLD_SIZE=str(world),
        BURN_MASTER_ADDR=addr,
        BURN_MASTER_PORT=str(port),
        NCCL_NVLS_ENABLE="0",
    )
    return env


def main(argv: list[str] | None = None) -> int:
    opts = build_parser().parse_args(argv)
    n = opts.nproc_per_node
    if n < 1 or opts.nnodes < 1 or not 0 <= opts.node_rank < opts.nnodes:
        print("launch: --nproc-per-node and --nnodes must be >= 1, 0 <= --node-rank < --nnodes",
              file=sys.stderr)  # fmt: skip
        return 2
    world = n * opts.nnodes
    token = job_token(opts.nnodes)
    if token is None:
        print("launch: with --nnodes > 1, set BURN_COLLECTIVE_TOKEN to the same secret on every "
              "host, e.g. export BURN_COLLECTIVE_TOKEN=$(python -c 'import secrets; "
              "print(secrets.token_hex(32))')", file=sys.stderr)  # fmt: skip
        return 2
    port = opts.master_port
    if port == 0:
        if opts.nnodes > 1:
            print("launch: give --master-port when training on several hosts", file=sys.stderr)
            return 2
        port = _free_port(opts.master_addr)
    records = tempfile.mkdtemp(prefix="burn-launch-")
    try:
        return _run(opts, n, world, port, records, token)
    finally:
        shutil.rmtree(records, ignore_errors=True)


def _first_failure(records: str) -> dict | None:
    """The earliest failure a rank recorded (see `_rank_main`), or None."""
    found = []
    for name in os.listdir(records):
        if name.startswith("rank-") and name.endswith(".json"):
            try:
                with open(os.path.join(records, name)) as f:
                    found.append(json.load(f))
            except (OSError, ValueError):
                continue
    return min(found, key=lambda r: r.get("time", 0.0), default=None)


def where_ranks(message: str, per_node: int, node_rank: int) -> str:
    """For the ranks `message` names that run on another host: "; rank K is on node M (another
    host: it may be lost)", so a failure caused by a lost node names the node."""
    import re

    found = sorted({int(k) for k in re.findall(r"\brank (\d+)", message)})
    other = [k for k in found if k // per_node != node_rank]
    return "".join(
        f"; rank {k} is on node {k // per_node} (another host: it may be lost)" for k in other
    )


def report_collectives(records: str) -> str | None:
    """Print (stderr) the time each of this host's ranks spent waiting on gradient
    collectives per step, from what their Learners left in `records`; returns the line."""
    stats = []
    for name in sorted(os.listdir(records)):
        if name.startswith("collective-rank-") and name.endswith(".json"):
            try:
                with open(os.path.join(records, name)) as f:
                    stats.append(json.load(f))
            except (OSError, ValueError):
                continue
    if not stats:
        return None
    stats.sort(key=lambda s: s.get("rank", 0))
    ranks = ", ".join(f"rank {s['rank']} {s['ms_per_step']:.2f}" for s in stats)
    mean = sum(s["ms_per_step"] for s in stats) / len(stats)
    line = f"launch: waiting on collectives per step (ms): {ranks}; mean {mean:.2f}"
    print(line, file=sys.stderr, flush=True)
    return line


def _run(opts, n: int, world: int, port: int, records: str, token: str) -> int:
    procs: dict[int, subprocess.Popen] = {}
    for local in range(n):
        rank = opts.node_rank * n + local
        env = child_env(os.environ, rank, local, world, opts.master_addr, port, token)
        env["BURN_LAUNCH_DIR"] = records
        cmd = [sys.executable, "-m", "burn_train._rank_main", opts.script, *opts.args]
        procs[rank] = subprocess.Popen(cmd, env=env)
    stopping = {"signal": None}

    def forward(signum, _frame):
        stopping["signal"] = signum
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signum)

    # One waiter per rank records when it exited: the rank that failed first is the cause, the
    # others fail after it (a peer's closed connection), maybe within the same poll.
    exited: dict[int, float] = {}

    def wait(rank: int, p: subprocess.Popen) -> None:
        p.wait()
        exited[rank] = time.monotonic()

    for rank, p in procs.items():
        threading.Thread(target=wait, args=(rank, p), daemon=True).start()
    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    failed: tuple[int, int] | None = None
    deadline = None
    try:
        while True:
            done = all(p.poll() is not None for p in procs.values()) and len(exited) == len(procs)
            order = sorted(exited, key=exited.get)
            for rank in order:
                p = procs[rank]
                code = p.returncode
                if code not in (None, 0) and failed is None and stopping["signal"] is None:
                    time.sleep(0.2)  # let a rank that raised first finish writing its record
                    first = _first_failure(records)
                    if first is not None and first.get("rank") in procs:
                        rank = first["rank"]
                        code = procs[rank].poll() or code
                        why = f"{first.get('type')}: {first.get('message')}"
                        why += where_ranks(why, n, opts.node_rank)
                    else:
                        why = f"exit status {code}"
                    failed = (rank, code)
                    print(f"launch: rank {rank} failed ({why}); stopping the other ranks",
                          file=sys.stderr, flush=True)  # fmt: skip
                    forward(signal.SIGTERM, None)
                    stopping["signal"] = None  # a failure, not a request to stop
                    deadline = time.monotonic() + opts.grace
            if stopping["signal"] is not None and deadline is None:
                deadline = time.monotonic() + opts.grace
            if deadline is not None and time.monotonic() > deadline:
                for p in procs.values():
                    if p.poll() is None:
                        p.kill()
            if done:  # checked before this pass: the pass has seen every exit
                break
            time.sleep(0.05)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    report_collectives(records)
    if failed is not None:
        return failed[1] if failed[1] > 0 else 128 - failed[1]
    if stopping["signal"] is not None:
        return 128 + stopping["signal"]
    codes = [p.returncode for p in procs.values()]
    return next((c for c in codes if c != 0), 0)


if __name__ == "__main__":
    raise SystemExit(main())
