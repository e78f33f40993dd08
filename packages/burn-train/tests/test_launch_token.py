"""The launcher gives every rank of a job one fresh secret (BURN_COLLECTIVE_TOKEN), the ranks
join with it, and a stranger on the master port cannot join (real processes, 127.0.0.1)."""

from __future__ import annotations

import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

SCRIPT = """
import os, sys
import numpy as np
from burn_tensor.collective import init_process_group

comm = init_process_group(timeout=30)
out = comm.all_reduce_array(np.array([1.0 + comm.rank, 2.0]))
with open(os.path.join(sys.argv[1], f"rank-{comm.rank}.txt"), "w") as f:
    f.write(os.environ["BURN_COLLECTIVE_TOKEN"] + " " + repr(out.tolist()))
comm.close()
"""


def _launch(tmp_path, *flags: str, env: dict | None = None, run_dir=None):
    script = tmp_path / "rank.py"
    script.write_text(SCRIPT)
    out = run_dir or tmp_path
    cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", "2", *flags]
    base = {k: v for k, v in os.environ.items() if k != "BURN_COLLECTIVE_TOKEN"}
    return subprocess.run(
        [*cmd, str(script), str(out)], check=False, capture_output=True, text=True, timeout=120,
        env={**base, **(env or {})},
    )  # fmt: skip


def _ranks(out) -> list[tuple[str, str]]:
    return [tuple((out / f"rank-{r}.txt").read_text().split(" ", 1)) for r in range(2)]


def test_each_launch_makes_one_fresh_secret_for_all_its_ranks(tmp_path):
    runs = []
    for i in range(2):
        out = tmp_path / f"run{i}"
        out.mkdir()
        run = _launch(tmp_path, run_dir=out)
        assert run.returncode == 0, run.stderr[-3000:]
        (t0, v0), (t1, v1) = _ranks(out)
        assert t0 == t1 and re.fullmatch(r"[0-9a-f]{64}", t0)
        assert v0 == v1 == "[3.0, 4.0]"  # (1 + 2, 2 + 2): the ranks joined and reduced
        assert t0 not in run.stdout + run.stderr  # never printed
        runs.append(t0)
    assert runs[0] != runs[1]


def test_several_hosts_need_a_token_given(tmp_path):
    run = _launch(tmp_path, "--nnodes", "2", "--master-port", "29999")
    assert run.returncode == 2
    assert "set BURN_COLLECTIVE_TOKEN to the same secret on every host" in run.stderr
    assert not (tmp_path / "rank-0.txt").exists()


def test_a_rank_started_by_hand_without_a_token_is_told_how_to_set_it(monkeypatch):
    from burn_tensor.collective import CollectiveError, init_process_group

    env = {"BURN_RANK": "1", "BURN_WORLD_SIZE": "2", "BURN_MASTER_ADDR": "127.0.0.1",
           "BURN_MASTER_PORT": "1"}  # fmt: skip
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("BURN_COLLECTIVE_TOKEN", raising=False)
    with pytest.raises(CollectiveError, match=r"no BURN_COLLECTIVE_TOKEN.*export BURN_COLL"):
        init_process_group(timeout=1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_stranger_on_the_master_port_cannot_join_a_launched_job(tmp_path):
    """The review's F5 reproducer against a real launch: the stranger claims rank 1 as soon as
    rank 0 listens, and the job still completes with the right sums. The token is given in the
    environment here: the launcher passes it on unchanged."""
    token = "a1" * 20
    port = _free_port()
    got: list[bytes] = []

    def stranger() -> None:
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                time.sleep(0.01)
        else:
            return
        head = b'{"rank": 1, "world_size": 2}'
        s.sendall(struct.pack("<I", len(head)) + head + struct.pack("<Q", 0))
        data = b""
        try:
            while chunk := s.recv(4096):
                data += chunk
        except OSError:
            pass
        got.append(data)
        s.close()

    t = threading.Thread(target=stranger, daemon=True)
    t.start()
    run = _launch(tmp_path, "--master-port", str(port), env={"BURN_COLLECTIVE_TOKEN": token})
    t.join(10)
    assert run.returncode == 0, run.stderr[-3000:]
    assert _ranks(tmp_path) == [(token, "[3.0, 4.0]"), (token, "[3.0, 4.0]")]
    # never admitted. Under load the real rank 1 may join and the job end before the stranger's
    # first connect lands: it then finds no listener at all (got stays empty) and was not
    # admitted either; the refusal's text is pinned by burn-tensor's test_collective_auth.py.
    assert not got or b"ready" not in got[0]
    # Served before the real rank 1, the stranger is told why; on a loaded machine the real rank
    # 1 can win the race, and the stranger's connection then closes unanswered (b"") when the
    # job's rendezvous is done. Both keep the job correct (asserted above); the refusal message
    # itself is pinned by burn-tensor's test_collective_auth.py.
    # (An empty `got`: the stranger never reached a listener, see above.)
    assert not got or got[0] == b"" or b"authentication failed" in got[0], got[0][:200]
