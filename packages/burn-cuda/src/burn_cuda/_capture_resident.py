"""The device scalar block of a captured step: random draws and Adam updates inside the graph.

A random draw takes the device's next (seed, call) pair and Adam's update its learning rate and
step count: host values that change from call to call, which a CUDA graph's recorded kernel
arguments cannot. `CudaTape` gives such ops (`RESIDENT_OPS`) a `ResidentBlock` instead of
splitting its graph around them: `WORDS` 8-byte words of the tape's private memory, which the
ops' `*_at` kernels (burn_gpu's `philox_random_at`, `philox_dropout_at`, `adam_update_at`,
`adam_many_at`) read.

- Random: words 0 and 1 hold the seed and the call number of the step's first draw; the k-th
  draw of the step reads call = words[1] + k (its recorded argument `delta` = k). A replay
  writes (seed, the device's counter now) and advances the counter by the step's draws
  (`_random.reserve`), so it draws the numbers the eager step would.
- Adam: each distinct (dtype, lr, betas, epsilon, step count) of the step's updates takes three
  words (factor, denom, lr in the kernel's scalar type, from `_optim._scalars`: the values the
  eager launch passes). A replay recomputes them from the learning rate and step count the
  capture layer binds (`scalars_of(call)`: {"lr": .., "time": ..} of resident call `call`).
  Updates that shared words when recorded share them at replay: equal recorded values are
  bound alike (an equal learning rate is one input leaf, or guarded; equal step counts
  advance alike).

The host keeps the words in `host` (ctypes); `refresh()` writes them to the device with ONE
launch of `resident_refresh`, the words passed by value as a kernel argument (the driver copies
arguments at the launch: no pinned host buffer that a graph still in flight could read after
the host rewrote it). The recording refreshes before each graph it launches, a replay once
before its graphs, on the tape's stream.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading

import numpy as np

#: words of a block (kernel arguments may take 4 KB: 1 KB here)
WORDS = 128
#: random draws: the seed and the first draw's call number
SEED, BASE = 0, 1
_FIRST_FREE = 2
#: the ops whose launches read the block
RESIDENT_OPS = frozenset(
    {"float_random", "int_random", "dropout", "float_adam_update", "float_adam_update_many"}
)

#: the kernel of `refresh` (in `_kernel_source.SOURCES`)
REFRESH_SOURCE = (
    f"struct burn_words {{ unsigned long long w[{WORDS}]; }};\n"
    'extern "C" __global__ void resident_refresh(unsigned long long* out, const burn_words v) {\n'
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    f"  if (i < {WORDS}) out[i] = v.w[i];\n"
    "}\n"
)


class _Active(threading.local):
    block = None


_ACTIVE = _Active()


def active():
    """The block of the step recording on this thread, while one of its resident ops runs (the
    ops launch their `*_at` kernels then); None otherwise."""
    return _ACTIVE.block


class ResidentBlock:
    """The words of one recording (see the module docstring); `words` is the device array."""

    def __init__(self, cp, device_index: int):
        self.cp = cp
        self.device_index = device_index
        self.words = cp.empty(WORDS, np.uint64)
        self.host = (ctypes.c_uint64 * WORDS)()
        self._u64 = np.ctypeslib.as_array(self.host)
        self._ptr = ctypes.c_uint64(self.words.data.ptr)
        self._params = (ctypes.c_void_p * 2)(
            ctypes.addressof(self._ptr), ctypes.addressof(self.host)
        )
        # the driver takes the pointer array's address as an integer (cupy's launchKernel
        # raises "an integer is required" for the ctypes array itself)
        self._params_addr = ctypes.addressof(self._params)
        self.free = _FIRST_FREE
        self.calls = 0  # resident calls recorded
        self._call = None  # the one running now
        self.refused: str | None = None
        self.foreign = False  # another thread drew between the step's draws
        # random: the device, its seed and the first call number of the recording; draws
        self.device = None
        self.seed = 0
        self.base = 0
        self.draws = 0
        # adam: [word, call, kd, lr, beta_1, beta_2, epsilon, time] per distinct update
        self.updates: list = []
        self._slots: dict = {}

    @contextlib.contextmanager
    def running(self, call: int):
        """Resident call `call` runs: its ops find this block (`active()`)."""
        prev = _ACTIVE.block
        _ACTIVE.block, self._call = self, call
        try:
            yield
        finally:
            _ACTIVE.block, self._call = prev, None

    def _refuse(self, why: str) -> None:
        self.refused = self.refused or why

    # -- the ops' side, while recording ---------------------------------------------------------
    def draw(self, device, seed: int, call: int):
        """(words, delta) for a draw that the eager op makes with (seed, call) on `device`, or
        None (the recording then cannot be replayed, and the caller draws with the arguments:
        another device, a reseed inside the step, a counter out of reach)."""
        if self.device is None:
            self.device, self.seed, self.base = device, seed, call
            self._u64[SEED], self._u64[BASE] = seed, call
        delta = call - self.base
        if device != self.device or getattr(device, "index", None) != self.device_index:
            self._refuse("it draws random numbers on two devices or another device")
            return None
        reseeded = "the device's random stream was reseeded inside the step"
        if seed != self.seed or not 0 <= delta < 2**32:
            self._refuse(reseeded)
            return None
        if delta < self.draws:  # (the words still give this draw its pair: right bits)
            self._refuse(reseeded)
        elif delta > self.draws:
            # another thread drew from the device's counter between the step's draws: this
            # recording is untrusted (the capture layer records again), as for its kernels
            self.foreign = True
        self.draws = delta + 1
        return self.words, delta

    def adam(self, kd, lr, beta_1, beta_2, epsilon, time):
        """Device address of the (factor, denom, lr) words of an Adam update in kernel scalar
        dtype `kd` (float32 or float64), or None when the block is full (the recording then
        cannot be replayed; the caller passes the scalars)."""
        key = (kd, lr, beta_1, beta_2, epsilon, time)
        w = self._slots.get(key)
        if w is None:
            if self.free + 3 > WORDS:
                self._refuse(f"more than {(WORDS - _FIRST_FREE) // 3} distinct Adam updates")
                return None
            w = self._slots[key] = self.free
            self.free += 3
            entry = [w, self._call, kd, lr, beta_1, beta_2, epsilon, time]
            self.updates.append(entry)
            self._write_adam(entry, lr, time)
        return self.words.data.ptr + 8 * w

    def _write_adam(self, entry, lr, time) -> None:
        from ._optim import _scalars  # (imports this module)

        w, _, kd, _, b1, b2, eps, _ = entry
        vals = _scalars(kd, lr, b1, b2, eps, time)[4:]
        view = self._u64.view(np.float32 if kd == np.float32 else np.float64)
        at = 2 * w if kd == np.float32 else w
        view[at : at + 3] = vals

    # -- the tape's side ------------------------------------------------------------------------
    @property
    def used(self) -> bool:
        return self.free > _FIRST_FREE or self.draws > 0

    def bind(self, scalars_of, reserve) -> None:
        """The words of a replay: `reserve(device, n)` -> (seed, first call) takes the step's
        draws from the device's counter; `scalars_of(call)` the bound lr and time."""
        if self.draws:
            self._u64[SEED], self._u64[BASE] = reserve(self.device, self.draws)
        for entry in self.updates:
            new = scalars_of(entry[1])
            self._write_adam(entry, new.get("lr", entry[3]), new.get("time", entry[7]))

    def refresh(self) -> None:
        """Write the host words to the device block, on the current stream (one launch)."""
        from ._kernels import kernel, process_launcher

        process_launcher().with_params(kernel("resident_refresh"), 1, 1, WORDS, self._params_addr)


def supported() -> bool:
    """Whether this process's launcher passes a struct argument (the driver launcher)."""
    from ._kernels import process_launcher

    return hasattr(process_launcher(), "with_params")
