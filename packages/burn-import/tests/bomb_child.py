"""Load one hostile file in a fresh process and report, as one JSON line, what happened.

    python bomb_child.py LOADER PATH [CAP_MIB]

LOADER is `pt` (`PyTorchFileRecorder().load`), `safetensors` (`SafetensorsFileRecorder().load`)
or `pickle` (`safe_loads` of the file's bytes). The report holds the error's type and message
(or "ok"), the peak RSS in MiB (`ru_maxrss`, and the kernel's VmHWM) after the imports and after
the load, and the seconds it took. Tests start it with `launch`, never directly (see there).
As a safety net for the shared test machine, the address space is capped at CAP_MIB (default
3072) past what the imports mapped: an unbounded loader then fails with MemoryError well before
the host swaps, and the test still sees its peak RSS.
"""

import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    import burn_import
    from burn_import._unpickler import safe_loads

    loader, path = sys.argv[1], Path(sys.argv[2])
    cap = int(sys.argv[3]) if len(sys.argv) > 3 else 3072
    data = path.read_bytes() if loader == "pickle" else None
    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + (cap << 20), resource.RLIM_INFINITY))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    hwm_before = _vm_hwm_mib()
    t = time.perf_counter()
    try:
        if loader == "pt":
            burn_import.PyTorchFileRecorder().load(path)
        elif loader == "safetensors":
            burn_import.SafetensorsFileRecorder().load(path)
        else:
            safe_loads(data, path.name)
        outcome = {"error": None, "message": "ok"}
    except BaseException as err:  # noqa: BLE001 - reported to the test, MemoryError included
        outcome = {"error": type(err).__name__, "message": str(err)[:2000]}
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
