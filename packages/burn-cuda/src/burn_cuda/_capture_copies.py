"""Copies of step capture on CUDA (`_capture_graph.py`): binding a replay's inputs into the
recording's buffers (`copy_into`, `copy_many`: one CUDA graph for a recurring set of addresses;
`copy_plan`: that graph's launch prepared once, for the copies a replay repeats after each
launch) and the recording's static copies of its inputs (`static_copy`).

The graph copies the 8-byte aligned pairs whose sizes are whole 8-byte words with
`copy_many8` launches (a table of COPY_TABLE (dst, src, words) entries passed by value, a block
row per entry), the rest as memcpy nodes: a transformer step rebinds ~300 parameters and Adam
moments per replay, and as memcpy nodes those cost ~0.5 ms of GPU time on the H200 (a node
each, ~1.6 us apiece), several times what the bytes need.
"""

from __future__ import annotations

import ctypes

from ._platform import load_cupy

#: entries of one `copy_many8` launch (the table travels by value: 3 words an entry, 1.5 KB)
COPY_TABLE = 64
#: most blocks along x of a `copy_many8` launch (its loop strides over the rest)
_COPY_BLOCKS = 1024
COPY_SOURCE = (
    f"struct copy_table {{ unsigned long long d[{COPY_TABLE}]; "
    f"unsigned long long s[{COPY_TABLE}]; long long n[{COPY_TABLE}]; }};\n"
    'extern "C" __global__ void copy_many8(const copy_table t) {\n'
    "  const int k = blockIdx.y;\n"
    "  const long long n = t.n[k];\n"
    "  unsigned long long* d = (unsigned long long*)t.d[k];\n"
    "  const unsigned long long* s = (const unsigned long long*)t.s[k];\n"
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "       i += (long long)blockDim.x * gridDim.x) d[i] = s[i];\n"
    "}\n"
)


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


def _split(pairs) -> tuple:
    """(plain, rest): (dst ptr, src ptr, bytes) of the contiguous pairs of one shape, dtype and
    device (empty ones dropped), and the other (dst, src) pairs."""
    plain, rest = [], []
    # cupy's `_c_contiguous` and `data.device_id` are plain attributes: `flags` and `device`
    # built an object each, four per pair, ~300 pairs per replay (issue 35: host time before
    # the step's graph launch, which a step that syncs after each call waits for)
    for dst, src in pairs:
        sd, dd = src.data, dst.data
        if (src._c_contiguous and dst._c_contiguous and src.shape == dst.shape
                and src.dtype == dst.dtype and sd.device_id == dd.device_id):  # fmt: skip
            n = src.nbytes
            if n:
                plain.append((dd.ptr, sd.ptr, n))
        else:
            rest.append((dst, src))
    return plain, rest


def _graph(cp, plain: list, device_id: int):
    """The cached CUDA graph copying address triples `plain` (recorded on first use)."""
    key = tuple(plain)
    graph = _COPY_GRAPHS.get(key)
    if graph is None:
        graph = _record_copies(cp, plain, device_id)
        if len(_COPY_GRAPHS) >= _COPY_GRAPHS_MAX:
            _COPY_GRAPHS.pop(next(iter(_COPY_GRAPHS)))
        _COPY_GRAPHS[key] = graph
    return graph


def copy_many(pairs) -> None:
    """`copy_into(dst, src)` for every (dst, src) pair, on the current stream. Contiguous pairs
    of one shape and dtype go as one launch of a CUDA graph of device-to-device memcpy nodes,
    recorded once per set of (destination, source, bytes) addresses: a replay of a captured
    training step binds the same ~300 parameter and moment buffers every call. The copies are
    address-to-address, so a cached graph is exactly the copies asked for whatever arrays now
    own those addresses."""
    plain, rest = _split(pairs)
    for dst, src in rest:
        copy_into(dst, src)
    cp = load_cupy()
    if len(plain) < 4:
        stream = cp.cuda.get_current_stream().ptr
        kind = cp.cuda.runtime.memcpyDeviceToDevice
        for d, s, n in plain:
            cp.cuda.runtime.memcpyAsync(d, s, n, kind, stream)
        return
    _graph(cp, plain, pairs[0][0].device.id).launch(cp.cuda.get_current_stream())


def copy_plan(pairs):
    """A function `go()` doing `copy_many(pairs)` at each call (the values the arrays hold
    then), on the current stream, with no per-pair work left: the pairs are split and their
    graph recorded (or found) once, and a call is one graph launch. `go` keeps the arrays
    alive, so their addresses stay theirs. A replay copies the ~300 results a training step
    passes back into its input buffers with one (issue 35: `copy_many`'s key of ~300 address
    triples was built per call).

    Example:
        >>> go = copy_plan(list(zip(statics, results)))  # doctest: +SKIP
        >>> go()  # statics get the results' values (queued)  # doctest: +SKIP
    """
    pairs = list(pairs)
    plain, rest = _split(pairs)
    cp = load_cupy()
    if len(plain) < 4 or rest:

        def go() -> None:
            copy_many(pairs)

    else:
        graph = _graph(cp, plain, pairs[0][0].device.id)
        current = cp.cuda.get_current_stream

        def go() -> None:
            graph.launch(current())

    go.pairs = pairs
    return go


def _record_copies(cp, plain, device_id: int):
    """A CUDA graph of the copies of `plain` ((dst, src, bytes) address triples): `copy_many8`
    launches for the whole-word aligned ones, memcpy nodes for the others."""
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    words = [t for t in plain if not (t[0] | t[1] | t[2]) & 7]
    other = [t for t in plain if (t[0] | t[1] | t[2]) & 7]
    with cp.cuda.Device(device_id):
        stream = cp.cuda.Stream(non_blocking=True)
        mode = getattr(cp.cuda.runtime, "streamCaptureModeRelaxed", None)
        stream.begin_capture() if mode is None else stream.begin_capture(mode)
        try:
            with stream:
                launch_word_copies(words)
            for d, s, n in other:
                cp.cuda.runtime.memcpyAsync(d, s, n, kind, stream.ptr)
        finally:
            graph = stream.end_capture()
    return graph


def launch_word_copies(triples) -> None:
    """`copy_many8` launches on the current stream copying each (dst, src, bytes) triple (both
    addresses and the size multiples of 8), COPY_TABLE triples a launch. Falls back to memcpy
    calls where the process's launcher cannot pass the table (cupy's RawKernel call)."""
    from ._kernels import BLOCK, kernel, process_launcher

    go = process_launcher()
    if not hasattr(go, "with_params"):
        cp = load_cupy()
        kind = cp.cuda.runtime.memcpyDeviceToDevice
        stream = cp.cuda.get_current_stream().ptr
        for d, s, n in triples:
            cp.cuda.runtime.memcpyAsync(d, s, n, kind, stream)
        return
    k = kernel("copy_many8")
    T = COPY_TABLE
    # by size, so a launch's entries are alike: every entry of a launch gets the grid its
    # longest one needs, and a training step's ~300 pairs mix 512-float biases with 1M-float
    # weights (unsorted, nearly every launch had 1024 blocks per entry, most of them idle).
    # The copies are independent (a step's pairs never overlap), so their order is free.
    triples = sorted(triples, key=lambda t: t[2])
    table = (ctypes.c_uint64 * (3 * T))()
    params = (ctypes.c_void_p * 1)(ctypes.addressof(table))
    for start in range(0, len(triples), T):
        chunk = triples[start : start + T]
        longest = 0
        for r, (d, s, n) in enumerate(chunk):
            table[r], table[T + r], table[2 * T + r] = d, s, n // 8
            longest = max(longest, n // 8)
        grid_x = max(1, min((longest + BLOCK - 1) // BLOCK, _COPY_BLOCKS))
        # the driver copies the table at the launch (and a capture keeps that copy)
        go.with_params(k, grid_x, len(chunk), BLOCK, ctypes.addressof(params))


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
