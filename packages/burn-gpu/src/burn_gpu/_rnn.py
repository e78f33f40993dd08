"""`rnn_sequence`'s time loop as one kernel, written once for both dialects: `rnn_steps`.

The input projection of every step is one matmul before it (`xw [seq*batch, dirs*G*H]`: the
runtime's GEMM, `_ops_rnn.py`); this kernel then runs every time step of every direction in one
launch: one work-group per (direction, batch row), looping over time inside the kernel with the
state in local memory. Per step each work-item owns hidden units `j = lid, lid + LSIZE, ...`:
it computes that unit's G gate pre-activations (`h . R^T[:, g*H + j]`, R^T read from global
memory as `[dirs, H, G*H]` so neighbouring items read neighbouring addresses) and the gate math,
then a barrier publishes the new h before the next step reads it. A GRU without
`linear_before_reset` needs `r * h` of every unit before its candidate's product: one more
barrier per step. Gate orders, activations, clip, biases and peepholes are ONNX's and
burn-tensor's default's (`burn_tensor._ops_rnn`): RNN `(i)`, GRU `(z, r, h)`, LSTM
`(i, o, f, c)`; peepholes `(i, o, f)`.

Local memory: three arrays of `HMAX` elements of the compute type (h, the next h, and c for an
LSTM or `r * h` for a GRU): 12 KiB in float32, 24 KiB in float64, under OpenCL's 32 KiB minimum
and CUDA's 48 KiB of static shared memory. A layer with more than `HMAX` hidden units takes the
default (one matmul per step).

Arguments: y [seq, dirs, batch, H], yh, yc [dirs, batch, H] (yc unwritten but for an LSTM);
xw, rt (R^T), bias [dirs, 2*G*H], h0, c0 [dirs, batch, H], peep [dirs, 3H] (each absent one a
dummy: `flags` says which are given); kind (0 RNN, 1 GRU, 2 LSTM), seq, batch, hs, dirs,
reverse (the only direction runs backwards), flags, acts (2 bits per activation code, 3 per
direction: sigmoid 0, tanh 1, relu 2), clip (compute type), then the element offsets of xw, rt,
bias, h0, c0, peep (64-bit).
"""

from __future__ import annotations

from ._dialect import HALF, fill, frame, storage_head

#: the most hidden units the kernel's local memory holds (more: the default)
HMAX = 1024
#: the element types of the kernel: the half types are storage (float32 state and math, each
#: output rounded once); OpenCl's reach it as float32 (its half detour), Cuda's as they are
DTYPES = ("float32", "float64", *HALF)
#: `flags` bits
HAS_B, HAS_H0, HAS_C0, HAS_P, HAS_CLIP, LBR, INPUT_FORGET = (1 << k for k in range(7))
#: the group size on a CPU device (`rnn_group`)
CPU_GROUP = 32
KINDS = {"RNN": 0, "GRU": 1, "LSTM": 2}
ACT_CODES = {"sigmoid": 0, "tanh": 1, "relu": 2}

_SRC = """
@DEV@T rnn_act(const int code, const T v) {
  if (code == 0) return (T)1 / ((T)1 + exp(-v));
  if (code == 1) return tanh(v);
  return v > (T)0 ? v : (T)0;
}
/* clip as a clamp that keeps NaN (numpy's np.clip) */
#define CLIP(v) ((flags & 16) ? ((v) < -clip ? -clip : ((v) > clip ? clip : (v))) : (v))
#define XB(g, j) (LOAD(xt, (g) * hs + (j)) + ((flags & 1) ? LOAD(wb, (g) * hs + (j)) : (T)0))
#define RB(g, j) ((flags & 1) ? LOAD(rb, (g) * hs + (j)) : (T)0)

@KERNEL@rnn_steps(@G@S* y, @G@S* yh, @G@S* yc, @G@const S* xw, @G@const S* rt,
                  @G@const S* bias, @G@const S* h0, @G@const S* c0, @G@const S* peep,
                  const int kind, const int seq, const int batch, const int hs, const int dirs,
                  const int reverse, const int flags, const int acts, const T clip,
                  const L xo, const L ro, const L bo, const L ho, const L co, const L po) {
  @LOCAL@T hl[HMAX];
  @LOCAL@T hn[HMAX];
  @LOCAL@T aux[HMAX];  /* LSTM: c; GRU: r * h */
  const int grp = @GROUP@;
  const int d = grp / batch, bb = grp % batch;
  const int lid = @LID@, ls = LSIZE;
  const int ng = kind == 0 ? 1 : (kind == 1 ? 3 : 4);
  const L gh = (L)ng * hs;
  const int back = reverse || d == 1;
  const int fa = (acts >> (6 * d)) & 3, ga = (acts >> (6 * d + 2)) & 3;
  const int ha = (acts >> (6 * d + 4)) & 3;
  const int lbr = flags & 32, forget1 = flags & 64, peeps = flags & 8;
  @G@const S* R = rt + ro + (L)d * hs * gh;
  @G@const S* wb = bias + bo + (L)d * 2 * gh;
  @G@const S* rb = wb + gh;
  @G@const S* pp = peep + po + (L)d * 3 * hs;
  const L st = ((L)d * batch + bb) * hs;
  for (int j = lid; j < hs; j += ls) {
    hl[j] = (flags & 2) ? LOAD(h0, ho + st + j) : (T)0;
    if (kind == 2) aux[j] = (flags & 4) ? LOAD(c0, co + st + j) : (T)0;
  }
  @BARRIER@
  for (int s = 0; s < seq; ++s) {
    const int t = back ? seq - 1 - s : s;
    @G@const S* xt = xw + xo + ((L)t * batch + bb) * dirs * gh + (L)d * gh;
    for (int j = lid; j < hs; j += ls) {
      T a0 = (T)0, a1 = (T)0, a2 = (T)0, a3 = (T)0;
      if (kind == 0) {
        for (int k = 0; k < hs; ++k) a0 += hl[k] * LOAD(R, (L)k * gh + j);
        hn[j] = rnn_act(fa, CLIP(XB(0, j) + a0 + RB(0, j)));
      } else if (kind == 1) {
        for (int k = 0; k < hs; ++k) {
          const T hk = hl[k];
          @G@const S* row = R + (L)k * gh;
          a0 += hk * LOAD(row, j);
          a1 += hk * LOAD(row, hs + j);
          if (lbr) a2 += hk * LOAD(row, 2 * hs + j);
        }
        const T z = rnn_act(fa, CLIP(XB(0, j) + a0 + RB(0, j)));
        const T r = rnn_act(fa, CLIP(XB(1, j) + a1 + RB(1, j)));
        if (lbr) {
          const T hh = rnn_act(ga, CLIP(XB(2, j) + r * (a2 + RB(2, j))));
          hn[j] = hh + z * (hl[j] - hh);
        } else {
          hn[j] = z;
          aux[j] = r * hl[j];
        }
      } else {
        for (int k = 0; k < hs; ++k) {
          const T hk = hl[k];
          @G@const S* row = R + (L)k * gh;
          a0 += hk * LOAD(row, j);
          a1 += hk * LOAD(row, hs + j);
          a2 += hk * LOAD(row, 2 * hs + j);
          a3 += hk * LOAD(row, 3 * hs + j);
        }
        const T c = aux[j];
        T gi = XB(0, j) + a0 + RB(0, j), gf = XB(2, j) + a2 + RB(2, j);
        if (peeps) { gi += LOAD(pp, j) * c; gf += LOAD(pp, 2 * hs + j) * c; }
        const T i = rnn_act(fa, CLIP(gi));
        const T f = forget1 ? (T)1 - i : rnn_act(fa, CLIP(gf));
        const T cn = f * c + i * rnn_act(ga, CLIP(XB(3, j) + a3 + RB(3, j)));
        T go = XB(1, j) + a1 + RB(1, j);
        if (peeps) go += LOAD(pp, hs + j) * cn;
        aux[j] = cn;
        hn[j] = rnn_act(fa, CLIP(go)) * rnn_act(ha, cn);
      }
    }
    if (kind == 1 && !lbr) {  /* the candidate reads r * h of every unit */
      @BARRIER@
      for (int j = lid; j < hs; j += ls) {
        T a2 = (T)0;
        for (int k = 0; k < hs; ++k) a2 += aux[k] * LOAD(R, (L)k * gh + 2 * hs + j);
        const T hh = rnn_act(ga, CLIP(XB(2, j) + a2 + RB(2, j)));
        const T z = hn[j];
        hn[j] = hh + z * (hl[j] - hh);
      }
    }
    @BARRIER@  /* every product of this step has read hl */
    const L yo = (((L)t * dirs + d) * batch + bb) * hs;
    for (int j = lid; j < hs; j += ls) {
      hl[j] = hn[j];
      STORE(y, yo + j, hn[j]);
    }
    @BARRIER@
  }
  for (int j = lid; j < hs; j += ls) {
    STORE(yh, st + j, hl[j]);
    if (kind == 2) STORE(yc, st + j, aux[j]);
  }
}
"""


def rnn_program(dtype: str, dialect: str) -> str:
    """`rnn_steps` for element type `dtype` (float32, float64 or a half type) in `dialect`."""
    if dtype not in DTYPES:
        raise ValueError(f"rnn_program: dtype must be one of {DTYPES}, got {dtype!r}")
    fr = frame(dialect)
    head = fr.pragma([dtype]) + storage_head(fr, dtype) + f"typedef {fr.ct['int64']} L;\n"
    size = "((int)blockDim.x)" if fr.cuda else "((int)get_local_size(0))"
    head += f"#define HMAX {HMAX}\n#define LSIZE {size}\n"
    return head + fill(_SRC, fr)


def rnn_group(hs: int, max_group: int, cpu: bool = False) -> int:
    """Work-items of a group for `hs` hidden units: a power of two from 32 (a warp) to 256,
    at least `hs` where it can be (each item owns `hs / group` units), at most `max_group`.
    On a CPU device (PoCL) always CPU_GROUP: its work-items run one after another anyway, and
    PoCL builds the kernel anew for each group size it meets."""
    if cpu:
        return max(1, min(CPU_GROUP, max_group))
    g = 32
    while g < hs and g < 256:
        g *= 2
    return max(1, min(g, max_group))


def act_bits(kind: str, activations) -> int:
    """The activation names (the kind's count per direction: RNN 1, GRU 2, LSTM 3) packed as
    the kernel reads them: 2 bits per code, 3 slots per direction."""
    per = {"RNN": 1, "GRU": 2, "LSTM": 3}[kind]
    bits = 0
    for k, a in enumerate(activations):
        bits |= ACT_CODES[a] << (6 * (k // per) + 2 * (k % per))
    return bits
