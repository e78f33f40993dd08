"""`rnn_sequence` written once over the runtime contract: `GpuRnnOps`, a mixin of a
`GpuBackend` (OpenCl, Cuda) -- the input projection of every step and direction as one matmul
(the backend's own GEMM), then one launch of `rnn_steps` (`_rnn.py`) for all time steps and
directions, where the contract's default makes about ten backend calls per step.

Falls back to the default (`burn_tensor._ops_rnn.RnnOps`), with the reason:
- a dtype other than float32 / float64 / float16 / bfloat16, float64 on a device without it, or
  operands of mixed dtypes: the kernel is rendered for one storage type;
- more than `HMAX` (1024) hidden units: the state lives in local memory of fixed size;
- an empty batch, hidden size or input size: nothing to launch.
"""

from __future__ import annotations

from ._rnn import (
    DTYPES,
    HAS_B,
    HAS_C0,
    HAS_CLIP,
    HAS_H0,
    HAS_P,
    HMAX,
    INPUT_FORGET,
    KINDS,
    LBR,
    act_bits,
    rnn_group,
    rnn_program,
)


class GpuRnnOps:
    """Mixin of a `GpuBackend`: `rnn_sequence` as one matmul and one `rnn_steps` launch."""

    def rnn_sequence(
        self, x, w, r, b, h0, c0, p, kind, direction, activations, clip, linear_before_reset,
        input_forget,
    ):  # fmt: skip
        args = (x, w, r, b, h0, c0, p, kind, direction, activations, clip)
        if not self._rnn_eligible(x, w, r, b, h0, c0, p):
            return super().rnn_sequence(*args, linear_before_reset, input_forget)
        rt = self.kernels_of(x)
        seq, batch, n_in = x.shape
        dirs, gh, hs = r.shape
        dt = x.dtype
        if seq:  # every step's input projection, both directions: [seq*batch, dirs*G*H]
            x2 = self.float_reshape(x, (seq * batch, n_in))
            w2 = self.float_swap_dims(self.float_reshape(w, (dirs * gh, n_in)), 0, 1)
            xw = rt.contiguous(self.float_matmul(x2, w2))
        else:
            xw = rt.contiguous(x)  # read by nobody: no step
        r_t = rt.contiguous(self.float_swap_dims(r, 1, 2))  # [dirs, H, G*H]
        given = [rt.contiguous(t) if t is not None else None for t in (b, h0, c0, p)]
        flags = sum(bit for bit, t in zip((HAS_B, HAS_H0, HAS_C0, HAS_P), given) if t is not None)
        flags |= (HAS_CLIP if clip is not None else 0) | (LBR if linear_before_reset else 0)
        flags |= INPUT_FORGET if input_forget else 0
        y = rt.empty((seq, dirs, batch, hs), dt)
        yh = rt.empty((dirs, batch, hs), dt)
        yc = rt.empty((dirs, batch, hs), dt) if kind == "LSTM" else None
        ins = [xw, r_t, *(xw if t is None else t for t in given)]
        offsets = [(rt.layout(t)[1] if t is not None else 0, "int64") for t in [xw, r_t, *given]]
        codes = [KINDS[kind], seq, batch, hs, dirs, int(direction == "reverse"), flags]
        codes.append(act_bits(kind, activations))
        g = rnn_group(hs, rt.max_group, rt.cpu)
        k = rt.kernel(("rnn", dt.name), "rnn_steps", lambda: rnn_program(dt.name, rt.dialect))
        call = [y, yh, yh if yc is None else yc, *ins, *((v, "int32") for v in codes)]
        ct = "float64" if dt.name == "float64" else "float32"  # the kernel's compute type T
        call += [(0.0 if clip is None else float(clip), ct), *offsets]
        rt.call(k, dirs * batch * g, call, group=g)
        return y, yh, yc

    def _rnn_eligible(self, x, *others) -> bool:
        dt = x.dtype
        if dt.name not in DTYPES or any(t is not None and t.dtype != dt for t in others):
            return False
        rt = self.kernels_of(x)
        if dt.name == "float64" and not rt.fp64:
            return False
        _seq, batch, n_in = x.shape
        hs = others[1].shape[2]
        return 0 < hs <= HMAX and batch > 0 and n_in > 0
