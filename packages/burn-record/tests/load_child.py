"""Load one record file in a fresh process and report what happened, as one JSON line.

    python load_child.py RECORDER PATH [MMAP]

Reports the error's type and message (or "ok"), the peak RSS in MiB (`ru_maxrss`, and the
kernel's VmHWM) before and after the load, and the seconds it took. Tests start it with
`launch`, never directly (see there). The address space is capped (RLIMIT_AS, 4 GiB past the
imports), so a loader that does not bound its memory fails here with MemoryError instead of
swapping the host.
"""

import json
import resource
import subprocess
import sys
import time


def main() -> None:
    import burn_record

    name, path = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        burn_record._recorder.MMAP_LOADS = sys.argv[3] == "1"
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + (4 << 30), hard))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    hwm_before = _vm_hwm_mib()
    t = time.perf_counter()
    try:
        getattr(burn_record, name)().load(path)
        outcome = {"error": None, "message": "ok"}
    except Exception as err:  # noqa: BLE001 - reported to the test
        outcome = {"error": type(err).__name__, "message": str(err)}
    outcome["seconds"] = time.perf_counter() - t
    outcome["rss_before"] = before
    outcome["rss_after"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    outcome["hwm_before"], outcome["hwm_after"] = hwm_before, _vm_hwm_mib()
    print(json.dumps(outcome))


def launch(*args: str, timeout: float = 300) -> dict:
    """Run this script with `args` in a fresh process and return its report.

    Linux carries a process's peak RSS across `exec`: a child started directly by a big parent
    (pytest after other tests) would report the parent's peak as its own `ru_maxrss`, hiding any
    growth below it. A shell in between forks the child from its own tiny process, so the
    child's `ru_maxrss` starts from what the child itself uses; the report's `hwm_before` (the
    kernel's VmHWM, which never inherits) proves it.
    """
    run = subprocess.run(
        ["/bin/sh", "-c", '"$@"; exit $?', "sh", sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["rss_before"] <= out["hwm_before"] + 16, f"inherited peak RSS: {out}"
    return out


def _vm_hwm_mib() -> float:
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


if __name__ == "__main__":
    main()
