"""The OpenCL tape under a CUDA graph's rules, so step capture's CUDA paths run in CI (PoCL).

`burn_cuda`'s `CudaTape` records a step as CUDA graphs; the capture layer (`burn_fusion`) then
lives with what a graph cannot do or see, which an OpenCL tape can. `CudaRulesTape` is the real
`ClTape` (the same enqueues recorded and replayed) with those limits put back:
- a host read inside the recording raises, as cupy does while a stream captures (the step
  stops half-way; the capture layer must put back the host state it advanced and run it
  eagerly), instead of being seen and allowed;
- inputs cannot be rebound (a graph's addresses are fixed): every replay copies its inputs into
  the recording's buffers, and `writes` says which arrays a replay overwrites;
- the scalar arguments of the recorded kernels are not in its signature (a graph's cupy and
  cuBLAS kernels keep their constants out of sight), and another thread's enqueues go unseen
  (a CUDA tape sees only fused launches): the capture layer has to notice both itself;
- a dynamic op's results are copied back into the recorded buffers whenever device work
  follows it (a graph cannot say which buffers its kernels read), so a replay rewrites arrays
  the step returned (Adam's new parameters, when the step computes more after the update);
- `rewind` puts the device's random counter back, as `CudaTape.rewind` does.
What it does not simulate: kernels that do not run while recording (a graph runs at its
split), and CUDA's own refusals (syncs, uploads).
"""

from __future__ import annotations

import threading

import numpy as np
from burn_opencl._capture_tape import ClTape
from burn_opencl._runtime import Runtime


class CudaRulesTape(ClTape):
    """`ClTape` with a CUDA graph's limits (see the module docstring)."""

    rebind = None  # fixed addresses: the capture layer copies inputs in

    def __init__(self, rt):
        super().__init__(rt)
        self.recording = False
        self.lost = False
        self._rng = None

    def _mine(self) -> bool:  # blind to other threads' enqueues (no `foreign` from here)
        return threading.get_ident() == self.tid and self.depth == 0

    def start(self) -> None:
        rng = getattr(self.rt, "rng", None)
        self._rng = None if rng is None else list(rng)
        super().start()
        self.recording = True
        rt, tape = self.rt, self

        def read(buf, out, byte_offset=0):
            if threading.get_ident() == tape.tid and tape.depth == 0:
                raise RuntimeError(
                    "the current stream is capturing, so D2H transfers are disallowed "
                    "(simulated: burn-fusion tests' CudaRulesTape)"
                )
            return Runtime.read(rt, buf, out, byte_offset)

        rt.read = read

    def stop(self) -> None:
        self.recording = False
        super().stop()

    def explains(self, exc: BaseException) -> bool:
        if self.recording and "captur" in str(exc).lower():
            self.refused = self.refused or f"a host read inside the step: refused ({exc})"
            return True
        return False

    def rewind(self) -> str:
        if self._rng is not None:
            self.rt.rng = list(self._rng)
        return f"random counter back to {self._rng}"

    def finish(self, work_after=None) -> None:
        super().finish(work_after)
        if work_after is not None:  # CudaTape.finish's rule
            self.copy_back = [
                [bool(work_after[c])] * len(res) for c, (_, _, _, res) in enumerate(self.calls)
            ]

    def writes(self, prim) -> bool:
        return prim.buf.int_ptr in self.bufs

    def signature(self, role) -> tuple:
        return _blind(super().signature(role))


def _blind(x):
    """`x` with every float and byte string (a kernel's scalar argument) replaced by its type."""
    if isinstance(x, tuple | list):
        return tuple(_blind(e) for e in x)
    if isinstance(x, bytes | float | np.floating):
        return type(x).__name__
    return x
