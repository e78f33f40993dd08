"""How `burn_train.launch` runs each rank's script: `python -m burn_train._rank_main script.py
args...`. The script runs as `__main__`; an exception escaping it is first recorded (rank, time,
type, message) in `$BURN_LAUNCH_DIR`, then raised as usual. The launcher names the rank whose
record is earliest: the others usually fail after it, when its connections close, yet may exit
before it (its interpreter is still tearing down)."""

from __future__ import annotations

import json
import os
import runpy
import sys
import time


def bind_gpu() -> int | None:
    """Make GPU `BURN_LOCAL_RANK % count` cupy's current device in this rank (torchrun's
    `torch.cuda.set_device(local_rank)`, done for the script). cupy runs a kernel on the current
    device, so without this rank 1's model, built on `Cuda().device(1)`, would be computed by
    GPU 0 reading GPU 1's memory. Returns the GPU index, or None where cupy or a GPU is
    missing (CPU backends need nothing)."""
    import importlib.util

    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no driver or no device: nothing to bind
        return None
    if count < 1:
        return None
    index = int(os.environ.get("BURN_LOCAL_RANK", "0")) % count
    cupy.cuda.Device(index).use()
    return index


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit("usage: python -m burn_train._rank_main script.py [args...]")
    bind_gpu()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise
    except BaseException as err:
        where = os.environ.get("BURN_LAUNCH_DIR")
        if where:
            record = {
                "rank": int(os.environ.get("BURN_RANK", "-1")),
                "time": time.time(),
                "type": type(err).__name__,
                "message": str(err)[:500],
            }
            # Atomic, through a random O_EXCL temp name: never a fixed `.tmp` that a symlink
            # planted in the folder could redirect.
            from burn_record import atomic_write

            data = json.dumps(record).encode("utf-8")
            path = os.path.join(where, f"rank-{record['rank']}.json")
            atomic_write(path, lambda f: f.write(data))
        raise


if __name__ == "__main__":
    main()
