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


@pytest.fixture(scope="session")
def cl_fp64(cl_queue):
    """`cl_queue` on a device with float64 (`cl_khr_fp64`); skips with the reason otherwise."""
    if "cl_khr_fp64" not in cl_queue[2].extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    return cl_queue


@pytest.fixture(scope="session")
def cl_build(cl_queue):
    """`build(source)`: the program compiled on `cl_queue`'s context, PoCL's build notes
    (pyopencl's compiler-output warnings) silenced."""
    import warnings

    import pyopencl as cl

    def build(source: str):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cl.Program(cl_queue[0], source).build()

    return build
