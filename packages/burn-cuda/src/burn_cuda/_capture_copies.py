"""Copies of step capture on CUDA (`_capture_graph.py`): binding a replay's inputs into the
recording's buffers (`copy_into`, `copy_many`: one CUDA graph of memcpy nodes for a recurring
set of addresses) and the recording's static copies of its inputs (`static_copy`)."""

from __future__ import annotations

from ._platform import load_cupy


def copy_into(dst, src) -> None:
    """Write `src`'s values into `dst` (same shape and dtype), on the current stream."""
    if src.shape != dst.shape or src.dtype != dst.dtype:
        raise ValueError(
            f"burn capture: cannot copy a {src.dtype}{list(src.shape)} tensor into a recorded "
            f"{dst.dtype}{list(dst.shape)} buffer"
        )
    dst[...] = src


#: (dst ptr, src ptr, bytes) tuples -> a CUDA graph of their memcpy nodes; a few sets recur
_COPY_GRAPHS: dict = {}
_COPY_GRAPHS_MAX = 8


def copy_many(pairs) -> None:
    """`copy_into(dst, src)` for every (dst, src) pair, on the current stream. Contiguous pairs
    of one shape and dtype go as one launch of a CUDA graph of device-to-device memcpy nodes,
    recorded once per set of (destination, source, bytes) addresses: a replay of a captured
    training step binds the same ~300 parameter and moment buffers every call. The copies are
    address-to-address, so a cached graph is exactly the copies asked for whatever arrays now
    own those addresses."""
    plain, rest = [], []
    for dst, src in pairs:
        if (src.shape == dst.shape and src.dtype == dst.dtype and src.flags.c_contiguous
                and dst.flags.c_contiguous and src.device.id == dst.device.id):  # fmt: skip
            if src.nbytes:
                plain.append((dst.data.ptr, src.data.ptr, src.nbytes))
        else:
            rest.append((dst, src))
    for dst, src in rest:
        copy_into(dst, src)
    if len(plain) < 4:
        cp = load_cupy()
        stream = cp.cuda.get_current_stream().ptr
        kind = cp.cuda.runtime.memcpyDeviceToDevice
        for d, s, n in plain:
            cp.cuda.runtime.memcpyAsync(d, s, n, kind, stream)
        return
    key = tuple(plain)
    graph = _COPY_GRAPHS.get(key)
    cp = load_cupy()
    if graph is None:
        graph = _record_copies(cp, plain, pairs[0][0].device.id)
        if len(_COPY_GRAPHS) >= _COPY_GRAPHS_MAX:
            _COPY_GRAPHS.pop(next(iter(_COPY_GRAPHS)))
        _COPY_GRAPHS[key] = graph
    graph.launch(cp.cuda.get_current_stream())


def _record_copies(cp, plain, device_id: int):
    """A CUDA graph of the memcpy nodes of `plain` ((dst, src, bytes) address triples)."""
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    with cp.cuda.Device(device_id):
        stream = cp.cuda.Stream(non_blocking=True)
        mode = getattr(cp.cuda.runtime, "streamCaptureModeRelaxed", None)
        stream.begin_capture() if mode is None else stream.begin_capture(mode)
        try:
            for d, s, n in plain:
                cp.cuda.runtime.memcpyAsync(d, s, n, kind, stream.ptr)
        finally:
            graph = stream.end_capture()
    return graph


def static_copy(src):
    """A new array holding `src`'s values in `src`'s layout (strides): a transposed or sliced
    view is copied into a view of the same strides over a buffer of its span, so kernels and
    cuBLAS read it as they read `src` (a contiguous copy may give a GEMM other bits). Layouts
    with zero or negative strides are copied contiguous."""
    cp = load_cupy()
    with cp.cuda.Device(src.device.id):
        st = src.strides
        if src.size == 0 or src.flags.c_contiguous or min(st, default=1) <= 0:
            dst = cp.empty(src.shape, src.dtype)
        else:
            isz = src.dtype.itemsize
            span = sum((n - 1) * s for n, s in zip(src.shape, st)) // isz + 1
            base = cp.empty(span, src.dtype)
            dst = cp.ndarray(src.shape, src.dtype, base.data, strides=st)
        dst[...] = src
    return dst
