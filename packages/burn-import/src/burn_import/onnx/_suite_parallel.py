"""Run the ONNX backend suite in several worker processes, one shard each, and merge the results.

On OpenCl most of a cold run is PoCL compiling kernels, one program at a time on one core: two
workers on a 2-core machine halve the wall time of the full OpenCL run. Each worker is
`python -m burn_import.onnx.suite --shard I/N --json FILE` (every N-th case from the I-th), so
together they run every case exactly once; a worker that dies, hangs or writes no results is an
error naming its shard and the tail of its output, never a silently smaller run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .suite import CaseResult, SuiteResult, resolve_expanded_ops


class SuiteWorkerError(RuntimeError):
    """A worker of `run_parallel` failed: the message names the shard, its exit and output."""


def run_parallel(
    kinds, device: str, workers: int, pattern: str | None = None, timeout_s: float = 1800.0
) -> SuiteResult:
    """The suite's `kinds` on `device` (a backend's registry name) in `workers` processes.

    Every shard's cases come back in one `SuiteResult`, in shard order; `seconds` is the wall
    time of the whole run.
    """
    start = time.perf_counter()
    result = SuiteResult()
    with tempfile.TemporaryDirectory(prefix="burn_onnx_suite_") as tmp:
        procs = []
        try:
            for i in range(workers):
                out, log = Path(tmp) / f"shard{i}.json", Path(tmp) / f"shard{i}.log"
                cmd = [sys.executable, "-m", "burn_import.onnx.suite", "--device", device]
                cmd += ["--kinds", ",".join(kinds), "--shard", f"{i}/{workers}", "--json", str(out)]
                if pattern:
                    cmd += ["-k", pattern]
                # the children build OpenCL programs as users do: the test session's
                # -cl-opt-disable (root conftest) makes the suite's larger models run slowly
                env = {k: v for k, v in os.environ.items() if k != "BURN_OPENCL_BUILD_OPTIONS"}
                with open(log, "wb") as sink:  # the child keeps its own copy of the descriptor
                    procs.append(subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env))
            for i, proc in enumerate(procs):
                left = max(1.0, timeout_s - (time.perf_counter() - start))
                try:
                    rc = proc.wait(timeout=left)
                except subprocess.TimeoutExpired:
                    rc = None
                out, log = Path(tmp) / f"shard{i}.json", Path(tmp) / f"shard{i}.log"
                if rc != 0 or not out.exists():
                    tail = log.read_text(errors="replace").strip().splitlines()[-15:]
                    why = f"timed out after {timeout_s:.0f} s" if rc is None else f"exited {rc}"
                    raise SuiteWorkerError(
                        f"ONNX suite worker {i}/{workers} on {device} {why}:\n" + "\n".join(tail)
                    )
                data = json.loads(out.read_text())
                result.cases += [CaseResult(**c) for c in data["cases"]]
        finally:
            for proc in procs:  # only on an error do any still run: stop exactly those we started
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    resolve_expanded_ops(result.cases)
    result.seconds = time.perf_counter() - start
    return result
