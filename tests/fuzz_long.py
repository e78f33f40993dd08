"""Every loader's long hostile-input fuzz, each in its own process under a memory limit.

    uv run python tests/fuzz_long.py [--limit-mib 4096] [--out fuzz.json]

Runs the fuzz tests with `HYPOTHESIS_PROFILE=long` (records: 12,000 examples per recorder over
three tests; SQLite datasets: 10,000 per storage; configs: 10,000 per test; PyTorch/safetensors
files: burn-import's long profile), each pytest process with its address space capped
(`resource.setrlimit(RLIMIT_AS)`): a loader that allocated what a hostile file asks for would
fail there with MemoryError instead of passing. Prints one line per loader: outcome, wall time
and peak RSS (the child's `ru_maxrss`), and writes them as JSON with `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {
    "records (10 recorders)": ["packages/burn-record/tests/test_fuzz.py"],
    "record load paths": ["packages/burn-record/tests/test_load_path.py"],
    "sqlite datasets": ["packages/burn-dataset/tests/test_fuzz_sqlite.py"],
    "configs": ["packages/burn-nn/tests/test_fuzz_config.py"],
    "pytorch/safetensors": ["packages/burn-import/tests", "-k", "fuzz or hostile"],
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--limit-mib", type=int, default=4096, help="address-space cap of each pytest process"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument(
        "--only", default=None, help="run only the loaders whose name contains this text"
    )
    return parser


def _run(args: list[str], limit: int) -> tuple[int, float, float, str]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = dict(os.environ, HYPOTHESIS_PROFILE="long", PYTHONUNBUFFERED="1")
    # -n 0: one process, so the peak RSS that wait4 reports is the tests' own, not that of a
    # pytest-xdist controller that runs no test
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *args]
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, preexec_fn=cap, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    code = os.waitstatus_to_exitcode(status)
    return code, time.monotonic() - start, usage.ru_maxrss / 1024, out


def main(argv: list[str] | None = None) -> int:
    opts = build_parser().parse_args(argv)
    limit = opts.limit_mib << 20
    results, failed = [], 0
    for name, args in TARGETS.items():
        if opts.only and opts.only not in name:
            continue
        code, wall, rss, out = _run(args, limit)
        summary = out.strip().splitlines()[-1] if out.strip() else ""
        results.append(
            {
                "loader": name,
                "exit": code,
                "seconds": round(wall, 1),
                "peak_rss_mib": round(rss),
                "summary": summary,
            }
        )
        failed += code != 0
        if code != 0:
            print(out[-4000:], file=sys.stderr)
        print(
            f"{name:24s} exit {code}  {wall:7.1f} s  peak RSS {rss:6.0f} MiB  {summary}", flush=True
        )
    if opts.out:
        opts.out.write_text(json.dumps(results, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
