"""One line on stderr the first time this machine builds OpenCL kernels for a device.

Why: a new user's first OpenCl run pauses for seconds while the driver compiles kernels (PoCL
on a CPU: tens of seconds for the guide) and looks hung. Later runs load them from the
driver's and pyopencl's caches, so the line is printed once per device and machine: a marker
file in burn's cache folder (`burn_tensor.cache`) records that the notice was given.

Example:
    >>> import os, tempfile
    >>> os.environ["BURN_CACHE_DIR"] = tempfile.mkdtemp()
    >>> announce("cpu pthread on PoCL")   # doctest: +SKIP
    burn-opencl: compiling OpenCL kernels for cpu pthread on PoCL (first use on this machine; ...)
"""

from __future__ import annotations

import hashlib
import sys

from burn_tensor import cache

_DONE: set[str] = set()  # devices announced (or checked) in this process


def announce(device_name: str) -> bool:
    """Print the notice if this machine never built kernels for `device_name`; True if printed."""
    if device_name in _DONE:
        return False
    _DONE.add(device_name)
    folder = cache.cache_dir("opencl", "first-build")
    if folder is None:  # no trusted cache: every run compiles, so say nothing
        return False
    marker = folder / (hashlib.sha256(device_name.encode()).hexdigest()[:24] + ".done")
    if marker.exists():
        return False
    print(
        f"burn-opencl: compiling OpenCL kernels for {device_name} (first use on this machine; "
        "later runs load them from the cache)",
        file=sys.stderr,
        flush=True,
    )
    try:
        marker.write_text(device_name + "\n")
    except OSError:  # a read-only cache only means the notice comes again next time
        pass
    return True
