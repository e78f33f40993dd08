"""burn-gpu's tests: the kernel templates rendered in both dialects, and the OpenCL rendering run
on the first OpenCL CPU device (PoCL here) against numpy float64."""

import pytest


@pytest.fixture(scope="session")
def cl_queue():
    """(context, queue, device) of the first OpenCL CPU device; skips with the reason when there
    is none (pyopencl or a driver missing)."""
    try:
        import pyopencl as cl

        devices = [
            d for p in cl.get_platforms() for d in p.get_devices() if d.type & cl.device_type.CPU
        ]
    except Exception as exc:  # noqa: BLE001 - no pyopencl, no ICD loader, no platform
        pytest.skip(f"no OpenCL CPU device here: {exc}")
    if not devices:
        pytest.skip("no OpenCL CPU device here")
    ctx = cl.Context([devices[0]])
    return ctx, cl.CommandQueue(ctx), devices[0]
