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
- `rewind` puts the device's random counter back, as `CudaTape.rewind` does;
- random draws and Adam's updates are resident, as on CudaTape (`resident(name)`): they run
  inside the recording (their enqueues recorded like any other), and a replay first writes
  their per-call values where the recorded launches read them -- the seed and call words of
  each Philox launch (the device's counter now, plus the draw's place in the step; the counter
  advances by the step's draws) and Adam's factor, denom and lr, computed from the learning
  rate and step count the capture layer binds (`scalars_of`) as OpenCl's launcher computes
  them. CudaTape reads them from a device block its replay rewrites; here they are patched
  into the recorded launches' arguments, the same values at the same place in the stream.
  `RESIDENT = frozenset()` on an instance gives the split path (dynamic calls) instead.
What it does not simulate: kernels that do not run while recording (a graph runs at its
split), and CUDA's own refusals (syncs, uploads).
"""

from __future__ import annotations

import math
import threading

import numpy as np
from burn_opencl._capture_tape import ClTape
from burn_opencl._runtime import Runtime


class CudaRulesTape(ClTape):
    """`ClTape` with a CUDA graph's limits (see the module docstring)."""

    rebind = None  # fixed addresses: the capture layer copies inputs in
    RESIDENT = frozenset({"float_random", "int_random", "dropout", "float_adam_update",
                          "float_adam_update_many"})  # fmt: skip

    def __init__(self, rt):
        super().__init__(rt)
        self.recording = False
        self.lost = False
        self._rng = None
        self.resident_ranges: list = []  # per resident call: (first op, end op, op args)
        self.scalars_of = None  # set by the capture layer: call index -> {"lr", "time"}
        self.draws = 0
        self.philox: list = []  # (launch args, the draw's call offset in the step)
        self.adam: list = []  # (launch args, resident call index)

    # -- resident ops ---------------------------------------------------------------------------
    def resident(self, name: str) -> bool:
        return self.recording and name in self.RESIDENT and self._mine()

    def resident_call(self, fn, args, kwargs):
        start, count = len(self.ops), self._count()
        out = fn(*args, **kwargs)  # its enqueues are recorded (depth 0)
        self.draws += self._count() - count  # (a draw of no element launches nothing)
        self.resident_ranges.append((start, len(self.ops), args))
        return out

    def _count(self) -> int:
        rng = getattr(self.rt, "rng", None)
        return 0 if rng is None else rng[1]

    def _find_resident(self) -> None:
        """The recorded launches whose arguments a replay rewrites."""
        first = 0 if self._rng is None else self._rng[1]
        for index, (start, end, _) in enumerate(self.resident_ranges):
            for op in self.ops[start:end]:
                if op[0] != "L":
                    continue
                name = op[1].function_name
                args = op[4]
                if name == "philox_random":
                    call = int(args[4]) | (int(args[5]) << 32)
                    self.philox.append((args, call - first))
                elif name == "adam_update":
                    self.adam.append((args, index))

    def _bind_resident(self) -> None:
        """This replay's values into the recorded launches (see the module docstring)."""
        if self.draws:
            seed, base = self.rt.rng
            self.rt.rng[1] = base + self.draws  # the step's draws, taken from the counter
            for args, delta in self.philox:
                call = base + delta
                args[2:6] = [np.uint32(w) for w in
                             (seed & _W, seed >> 32, call & _W, call >> 32)]  # fmt: skip
        for args, index in self.adam:
            _, _, _, _, lr, b1, b2, eps, time = self.resident_ranges[index][2]
            now = self.scalars_of(index)
            lr, time = now.get("lr", lr), now.get("time", time)
            bc2 = math.sqrt(1.0 - b2**time)  # as OpenCl's launcher
            sc = type(args[13])
            args[13:16] = [sc(bc2 / (1.0 - b1**time)), sc(eps * bc2), sc(lr)]

    def replay(self) -> None:
        self._bind_resident()
        super().replay()

    def stats(self) -> dict:
        """CudaTape's: graphs (runs of recorded work) and dynamic calls between them."""
        kinds = "".join("D" if op[0] == "D" else "G" for op in self.ops)
        segments = kinds.replace("G" * 2, "G")
        while "GG" in segments:
            segments = segments.replace("GG", "G")
        return {"segments": len(segments), "graphs": segments.count("G"),
                "resident_calls": len(self.resident_ranges)}  # fmt: skip

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
        self._find_resident()
        if work_after is not None:  # CudaTape.finish's rule
            self.copy_back = [
                [bool(work_after[c])] * len(res) for c, (_, _, _, res) in enumerate(self.calls)
            ]

    def writes(self, prim) -> bool:
        return prim.buf.int_ptr in self.bufs

    def signature(self, role) -> tuple:
        return _blind(super().signature(role))


_W = 0xFFFFFFFF


def _blind(x):
    """`x` with every float and byte string (a kernel's scalar argument) replaced by its type."""
    if isinstance(x, tuple | list):
        return tuple(_blind(e) for e in x)
    if isinstance(x, bytes | float | np.floating):
        return type(x).__name__
    return x
