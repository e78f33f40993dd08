"""Load one record file in a fresh process and report what happened, as one JSON line.

    python load_child.py RECORDER PATH [MMAP]

Reports the error's type and message (or "ok"), the peak RSS in MiB before and after the load,
and the seconds it took. The address space is capped (RLIMIT_AS, 4 GiB past the imports), so a
loader that does not bound its memory fails here with MemoryError instead of swapping the host.
"""

import json
import resource
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
    t = time.perf_counter()
    try:
        getattr(burn_record, name)().load(path)
        outcome = {"error": None, "message": "ok"}
    except Exception as err:  # noqa: BLE001 - reported to the test
        outcome = {"error": type(err).__name__, "message": str(err)}
    outcome["seconds"] = time.perf_counter() - t
    outcome["rss_before"] = before
    outcome["rss_after"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
