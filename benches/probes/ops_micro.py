"""Per-op times of issue #18's NdArray ops on [1024, 1024] float32: the Tensor op, its bare
native kernel, numpy, torch.

`python benches/probes/ops_micro.py [THREADS] [--reps N]` prints, per op, the minimum over many calls
(us) of: the burn Tensor op (dispatch + output allocation + kernel), the native kernel alone
(preallocated output, one ctypes call: what the op costs without Python), numpy, and torch with
THREADS threads when installed; which implementation NdArray installed for the op (`native`,
`threaded`, `numpy`); CPU seconds per wall second of the burn and torch loops; and first the
cost of one OpenMP region (one 4096-element block per thread). A Tensor-op time far above its kernel time means dispatch or
allocation overhead; a kernel time far above sqrt's (per element) means the loop itself.
Not a suite of `python -m benches`; the inputs are those of `benches/suites/unary.py`,
`binary.py` and `softmax.py`.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def best(fn, reps: int) -> float:
    """Minimum wall time of `reps` calls (after 3 warm-up calls), in microseconds."""
    return timed(fn, reps)[0]


def timed(fn, reps: int) -> tuple[float, float]:
    """(minimum wall time of `reps` calls in us, process CPU seconds per wall second over them):
    the second shows threads that burn CPU without work (spinning) between calls."""
    for _ in range(3):
        fn()
    t = float("inf")
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    cpu = (time.process_time() - c0) / max(1e-9, time.perf_counter() - w0)
    return t * 1e6, cpu


def rand(shape, seed, low=-1.0, high=1.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(np.float32)


def numpy_softmax(v: np.ndarray) -> np.ndarray:
    e = np.exp(v - v.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def kind(backend, name: str) -> str:
    fn = getattr(backend, name, None)
    mod = getattr(fn, "__module__", "") or ""
    if "_native" in mod:
        return "native"
    if "_threaded" in mod:
        return "threaded"
    return "numpy"


def build_parser() -> argparse.ArgumentParser:
    """The command line (every option with its help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "threads",
        nargs="?",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="threads of NdArray and torch (default: the usable cores)",
    )
    ap.add_argument("--reps", type=int, default=200, help="timed calls per op (default 200)")
    ap.add_argument("--no-torch", action="store_true", help="skip the torch column")
    return ap


def main() -> None:
    args = build_parser().parse_args()
    knobs = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_THREAD_TIMEOUT")
    # As given, before the kernels load (they set GOMP_SPINCOUNT when neither is set).
    # OMP_WAIT_POLICY=PASSIVE (as `python -m benches` sets for every suite of a run that
    # includes autodiff or training_step) makes each parallel region wake sleeping threads.
    env = " ".join(f"{k}={os.environ[k]}" for k in knobs if k in os.environ) or "none set"
    os.environ["BURN_NUM_THREADS"] = str(args.threads)
    from burn_ndarray import NdArray, _native
    from burn_tensor import Tensor, activation

    torch = None
    if not args.no_torch:
        try:
            import torch

            torch.set_num_threads(args.threads)
        except ImportError:
            torch = None
    b = NdArray(num_threads=args.threads)
    dev = b.device()
    lib = _native.lib()
    addr = _native.addr_fns()[0] if lib is not None else None
    shape = (1024, 1024)
    na, nb, nr, np_ = rand(shape, 1), rand(shape, 2, 0.5, 2.0), rand((1, 1024), 3, 0.5, 2.0), None
    np_ = rand(shape, 2, 0.1, 2.0)
    a, bb, r, p = (Tensor.from_data(x, dev) for x in (na, nb, nr, np_))
    out = np.empty(shape, np.float32)
    n = out.size
    tt = {} if torch is None else {k: torch.from_numpy(v.copy()) for k, v in
                                   (("a", na), ("b", nb), ("r", nr), ("p", np_))}  # fmt: skip

    def kern(name, *xs, scalar=None):
        """The bare kernel call of op `name` on preallocated output, or None."""
        if lib is None:
            return None
        nt = max(1, min(args.threads, n // (1 << 12)))
        if name in ("add", "sub", "mul", "div", "pow"):
            k = getattr(lib, f"bin_{name}_f32")
            x, y = xs
            if scalar is not None:
                s = np.array([scalar], np.float32)
                return lambda: k(addr(x), addr(s), addr(out), 1, n, 0, 1, 0, 0, nt)
            if y.shape != x.shape:  # a row broadcast: [1024, 1024] + [1, 1024]
                return lambda: k(addr(x), addr(y), addr(out), 1024, 1024, 1024, 1, 0, 1, nt)
            return lambda: k(addr(x), addr(y), addr(out), 1, n, 0, 1, 0, 1, nt)
        k = getattr(lib, f"un_{name}_f32")
        return lambda: k(addr(xs[0]), addr(out), n, nt)

    T = torch is not None
    rows = [
        # (label, backend op, burn, kernel, numpy, torch)
        ("add", "float_add", lambda: a + bb, kern("add", na, nb), lambda: na + nb,
         T and (lambda: tt["a"] + tt["b"])),
        ("sub", "float_sub", lambda: a - bb, kern("sub", na, nb), lambda: na - nb,
         T and (lambda: tt["a"] - tt["b"])),
        ("mul", "float_mul", lambda: a * bb, kern("mul", na, nb), lambda: na * nb,
         T and (lambda: tt["a"] * tt["b"])),
        ("div", "float_div", lambda: a / bb, kern("div", na, nb), lambda: na / nb,
         T and (lambda: tt["a"] / tt["b"])),
        ("add_broadcast", "float_add", lambda: a + r, kern("add", na, nr), lambda: na + nr,
         T and (lambda: tt["a"] + tt["r"])),
        ("mul_scalar", "float_mul_scalar", lambda: a * 1.5, kern("mul", na, None, scalar=1.5),
         lambda: na * np.float32(1.5), T and (lambda: tt["a"] * 1.5)),
        ("powf", "float_powf", lambda: bb.powf(a), kern("pow", nb, na), lambda: np.power(nb, na),
         T and (lambda: tt["b"].pow(tt["a"]))),
    ]  # fmt: skip
    for op, x, nx, tx in (
        ("exp", a, na, "a"), ("log", p, np_, "p"), ("sqrt", p, np_, "p"), ("tanh", a, na, "a"),
        ("sin", a, na, "a"), ("abs", a, na, "a"), ("neg", a, na, "a"), ("recip", p, np_, "p"),
        ("erf", a, na, "a"),
    ):  # fmt: skip
        npf = {"neg": np.negative, "recip": np.reciprocal}.get(op, getattr(np, op, None))
        tname = {"recip": "reciprocal"}.get(op, op)
        rows.append((
            op, "float_" + op, lambda x=x, op=op: getattr(x, op)(), kern(op, nx),
            npf and (lambda f=npf, v=nx: f(v)),
            T and (lambda t=tt[tx], m=tname: getattr(t, m)()),
        ))  # fmt: skip
    for shp in ((64, 1000), (1024, 1024), (32, 8, 128, 128)):
        x = Tensor.from_data(rand(shp, 1, -4.0, 4.0), dev)
        xn = rand(shp, 1, -4.0, 4.0)
        xt = torch.from_numpy(xn.copy()) if T else None
        name = "softmax " + "x".join(map(str, shp))
        rows.append((
            name, "softmax", lambda x=x: activation.softmax(x, -1), None,
            lambda v=xn: numpy_softmax(v),
            T and (lambda t=xt: torch.softmax(t, -1)),
        ))  # fmt: skip
    print(f"threads={args.threads} native={_native.status()} | {env}")
    if lib is not None:
        # One OpenMP region with one 4096-element block per thread: the fork/join cost (tiny
        # against a wake from futex sleep under OMP_WAIT_POLICY=PASSIVE).
        m = 4096 * args.threads
        xs, os_ = np.ones(m, np.float32), np.empty(m, np.float32)
        one = best(lambda: lib.un_abs_f32(addr(xs), addr(os_), m, 1), args.reps)
        par = best(lambda: lib.un_abs_f32(addr(xs), addr(os_), m, args.threads), args.reps)
        print(f"region: abs of {m} elements on 1 thread {one:.1f} us, on {args.threads}: "
              f"{par:.1f} us")  # fmt: skip
    print(f"{'op':24s} {'impl':9s} {'burn':>8s} {'cpu/s':>6s} {'kernel':>8s} {'numpy':>8s} "
          f"{'torch':>8s} {'cpu/s':>6s}")  # fmt: skip
    nan = (float("nan"), float("nan"))

    def settled(f):
        # torch's OpenMP threads spin up to ~20 ms after its calls (libgomp's default, read
        # before our kernels set GOMP_SPINCOUNT): let them sleep before timing the next side
        time.sleep(0.05)
        return timed(f, args.reps)

    for label, name, fb, fk, fn, ft in rows:
        (tb, cb), (tk, _), (tn, _), (tt_, ct) = (settled(f) if f else nan for f in (fb, fk, fn, ft))
        print(f"{label:24s} {kind(b, name):9s} {tb:8.1f} {cb:6.1f} {tk:8.1f} {tn:8.1f} "
              f"{tt_:8.1f} {ct:6.1f}")  # fmt: skip
    print("(us, min over calls; cpu/s: process CPU seconds per wall second over the timed calls)")


if __name__ == "__main__":
    main()
