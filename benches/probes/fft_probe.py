"""rfft + irfft round trips of issue 38's FFT on [batch, n] float32 along the last dim: the
burn Tensor ops (`burn_tensor.signal`) on one backend, beside torch.fft where torch is installed
(on the same kind of device), for powers of two (OpenCl: radix-2 passes), short other lengths
(OpenCl: the direct DFT) and long ones (OpenCl: Bluestein). Also checks each result against
numpy float64 and prints the largest error relative to the spectrum's largest magnitude.

`python benches/probes/fft_probe.py --backend opencl|cuda|ndarray [--batch 64] [--reps 20]`
prints one JSON line per length: {"backend", "n", "batch", "burn_ms", "torch_ms", "rel_err"}
(milliseconds per rfft + irfft pair, minimum over `reps` after warm-up, device synced).
Not a suite of `python -m benches`.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

LENGTHS = (1024, 4096, 48, 1000, 4000)


def _time(fn, sync, reps: int) -> float:
    for _ in range(2):
        fn()
    sync()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _torch_ms(x: np.ndarray, backend: str, reps: int):
    try:
        import torch
    except ImportError:
        return None
    dev = "cuda" if backend in ("cuda", "opencl") and torch.cuda.is_available() else "cpu"
    t = torch.from_numpy(x).to(dev)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    n = x.shape[-1]
    return _time(lambda: torch.fft.irfft(torch.fft.rfft(t, dim=-1), n=n, dim=-1), sync, reps)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="ndarray", help="registered backend name (ndarray, opencl, cuda)")
    ap.add_argument("--batch", type=int, default=64, help="signals per transform")
    ap.add_argument("--reps", type=int, default=20, help="timed repeats (median)")
    return ap


def main() -> None:
    args = build_parser().parse_args()
    from burn_tensor import Tensor, get_backend, signal

    B = get_backend(args.backend)
    dev = B.device()
    for n in LENGTHS:
        x = np.random.default_rng(n).normal(size=(args.batch, n)).astype(np.float32)
        t = Tensor.from_data(x, dev)

        def pair():
            re, im = signal.rfft(t, 1)
            return re, im, signal.irfft(re, im, 1, n=n)

        re, im, _ = pair()
        want = np.fft.rfft(x.astype(np.float64), axis=1)
        err = max(np.abs(re.numpy() - want.real).max(), np.abs(im.numpy() - want.imag).max())
        row = {
            "backend": args.backend,
            "n": n,
            "batch": args.batch,
            "burn_ms": round(_time(pair, dev.sync, args.reps), 4),
            "torch_ms": _torch_ms(x, args.backend, args.reps),
            "rel_err": float(err / np.abs(want).max()),
        }
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
