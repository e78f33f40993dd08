"""Load one hostile file in a fresh process and report, as one JSON line, what happened.

    python bomb_child.py LOADER PATH [CAP_MIB]

LOADER is `pt` (`PyTorchFileRecorder().load`), `safetensors` (`SafetensorsFileRecorder().load`)
or `pickle` (`safe_loads` of the file's bytes). The report holds the error's type and message
(or "ok"), the peak RSS in MiB (`ru_maxrss`) after the imports and after the load, and the
seconds it took. As a safety net for the shared test machine, the address space is capped at
CAP_MIB (default 3072) past what the imports mapped: an unbounded loader then fails with
MemoryError well before the host swaps, and the test still sees its peak RSS.
"""

import json
import resource
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
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
