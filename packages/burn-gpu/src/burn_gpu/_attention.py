"""Flash attention, forward: one kernel text for both dialects (Burn's `attention` module op).

`attention_program(dtype, head_dim, value_dim, dialect)` renders the forward and the backward's
kernels (those are in `_attention_bwd.py`):

- `attn_fwd`: softmax(Q Kᵗ * scale, masked) V for a block of `ROWS` queries of one (batch,
  head) per work-group, one query row per item. The keys stream through group-shared tiles of
  `TILE` rows (K and V); each item keeps its query row, its output row and its running max and
  sum in registers and rescales the output when the max grows (online softmax), so no
  [seq_q, seq_k] matrix exists anywhere. It writes the output and the log-sum-exp of each row.
- `attn_bwd_dq`, then `attn_bwd_dkv` or (`split_dkv`) `attn_bwd_dk` + `attn_bwd_dv`
  (FlashAttention-2's backward, `_attention_bwd.py`): the probabilities are recomputed from Q,
  K and the saved log-sum-exp.

Scores are kept in base 2 (the query is pre-multiplied by scale * log2(e), `exp2` of the
difference is the probability), so the saved "lse" is log2 of the row's sum of 2^s; only these
kernels read it. Accumulation is in float32 (float64 for float64 storage); bfloat16 storage
(16-bit patterns, `ushort`) is widened on load and rounded to nearest even on store.

Semantics as `burn_tensor`'s `AttentionOps`: a Bool mask (uchar, strides 0 on broadcast dims)
whose True entries are left out, `causal` leaves out key j of query i when
j > i + (seq_k - seq_q), and a query whose keys are all left out gets 0. A NaN score makes the
row NaN (as the decomposition).

Layout: Q, K, V, dO and O are read through (offset, batch stride, head stride, row stride) in
elements with the head dim contiguous; every output (O, dQ, dK, dV) and the row statistics are
written contiguous ([batch * heads * seq, dim]).
"""

from __future__ import annotations

import math

from ._attention_dropout import DROP_HELPERS, DROP_PARAMS
from ._dialect import fill, frame

#: query rows of a work-group (one row per item)
ROWS = 64
#: key rows of a group-shared K/V tile (forward, dQ) or query rows of a Q/dO tile (dK/dV)
TILE = 32
#: the largest head dim (query/key and value) a rendering takes
MAX_HEAD_DIM = 128
#: storage dtypes the kernels take (bfloat16 as 16-bit patterns, float32 accumulation)
DTYPES = ("float32", "float64", "bfloat16")
LOG2E = 1.4426950408889634

_ST_BF16 = """
@DEV@E st_bf16(float v) {
  unsigned int u = AS_UINT(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (E)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (E)(u >> 16);
}
"""

_FWD = """
@KERNEL@attn_fwd(@G@E* out, @G@A* lse, @G@const E* q, @G@const E* k, @G@const E* v,
                 @G@const MB* mask, const int heads, const int sq, const int sk, const int causal,
                 const int has_mask, const A scale2,
                 const L qo, const L qb, const L qh, const L qs,
                 const L ko, const L kb, const L kh, const L ks,
                 const L vo, const L vb, const L vh, const L vs,
                 const L mo, const L mb, const L mh, const L mq, const L mk) {
  SHARED16 A kt[TILE * D] ALIGN16;
  SHARED16 A vt[TILE * DV] ALIGN16;
  @LOCAL@A st[ROWS * (TILE + 1)];
  const int lid = @LID@;
  const int nqb = (sq + ROWS - 1) / ROWS;
  const int g = (int)@GROUP@;
  const int bh = g / nqb, blk = g - bh * nqb;
  const int bi = bh / heads, hi = bh - bi * heads;
  const int i = blk * ROWS + lid;
  const int valid = i < sq;
  const int off = sk - sq;
  @G@const E* qrow = q + qo + bi * qb + hi * qh + (L)(valid ? i : 0) * qs;
  @G@const E* kbase = k + ko + bi * kb + hi * kh;
  @G@const E* vbase = v + vo + bi * vb + hi * vh;
  @G@const MB* mrow = mask + mo + bi * mb + hi * mh + (L)(valid ? i : 0) * mq;
  A qr[D];
  A acc[DV];
#pragma unroll
  for (int c = 0; c < D; ++c) qr[c] = valid ? LD(qrow[c]) * scale2 : (A)0;
#pragma unroll
  for (int c = 0; c < DV; ++c) acc[c] = (A)0;
  A m = -INF_A, l = (A)0;
  const int drop = dthr != 0u;
  const U32 rk = drop ? drop_rowkey(drop_bhkey(dseed, bh), i) : 0u;
  int kend = sk;
  if (causal) {
    int last = min(sq - 1, blk * ROWS + ROWS - 1);  /* the group's last query sees the most */
    kend = min(sk, max(0, last + off + 1));
  }
  for (int k0 = 0; k0 < kend; k0 += TILE) {
    @BARRIER@
    for (int t = lid; t < TILE * D; t += ROWS) {
      int r = t / D, j = k0 + r;
      kt[t] = j < sk ? LD(kbase[(L)j * ks + (t - r * D)]) : (A)0;
    }
    for (int t = lid; t < TILE * DV; t += ROWS) {
      int r = t / DV, j = k0 + r;
      vt[t] = j < sk ? LD(vbase[(L)j * vs + (t - r * DV)]) : (A)0;
    }
    @BARRIER@
    if (valid) {
      A mt = m;
      for (int jj = 0; jj < TILE; ++jj) {
        int j = k0 + jj;
        A sp[4] = {(A)0, (A)0, (A)0, (A)0};  /* 4 chains: the FMAs overlap */
#pragma unroll
        for (int c = 0; c < D; ++c) sp[c & 3] += qr[c] * kt[jj * D + c];
        A s = (sp[0] + sp[1]) + (sp[2] + sp[3]);
        int hid = j >= sk || (causal && j > i + off) || (has_mask && mrow[(L)j * mk]);
        s = hid ? -INF_A : s;
        st[lid * (TILE + 1) + jj] = s;
        mt = (s > mt || s != s) ? s : mt;  /* a NaN score wins: the row becomes NaN */
      }
      if (mt != -INF_A) {
        A corr = EXP2(m - mt);
        l *= corr;
#pragma unroll
        for (int c = 0; c < DV; ++c) acc[c] *= corr;
        for (int jj = 0; jj < TILE; ++jj) {
          A p = EXP2(st[lid * (TILE + 1) + jj] - mt);
          l += p;  /* the row sum of the undropped weights */
          if (drop && !drop_keep(rk, k0 + jj, dthr)) p = (A)0;
#pragma unroll
          for (int c = 0; c < DV; ++c) acc[c] += p * vt[jj * DV + c];
        }
        m = mt;
      }
    }
  }
  if (!valid) return;
  const L r = (L)bh * sq + i;
  if (l == (A)0) {  /* every key left out: 0, as the decomposition */
    for (int c = 0; c < DV; ++c) out[r * DV + c] = ST((A)0);
    lse[r] = -INF_A;
    return;
  }
  A inv = drp / l;  /* drp = 1 / (1 - p): the kept weights' scale */
  for (int c = 0; c < DV; ++c) out[r * DV + c] = ST(acc[c] * inv);
  lse[r] = m + LOG2(l);
}
"""


def _check(dtype: str, head_dim: int, value_dim: int, dialect: str) -> None:
    if dtype not in DTYPES:
        raise ValueError(f"attention_program: dtype must be one of {DTYPES}, got {dtype!r}")
    for name, d in (("head_dim", head_dim), ("value_dim", value_dim)):
        if type(d) is not int or not 1 <= d <= MAX_HEAD_DIM:
            raise ValueError(
                f"attention_program: {name} must be an int in 1..{MAX_HEAD_DIM}, got {d!r}"
            )
    frame(dialect)


def _head(dtype: str, head_dim: int, value_dim: int, fr) -> str:
    """typedefs and macros: E storage, A accumulation, L 64-bit index, MB mask byte; LD/ST
    between storage and accumulation; EXP2/LOG2 of the accumulation type; the tile sizes."""
    acc = "float64" if dtype == "float64" else "float32"
    A, L = fr.ct[acc], fr.ct["int64"]
    lines = [fr.pragma([dtype]).rstrip("\n")] if dtype == "float64" else []
    if dtype == "bfloat16":
        E = "unsigned short" if fr.cuda else "ushort"
        as_float = "__uint_as_float" if fr.cuda else "as_float"
        as_uint = "__float_as_uint" if fr.cuda else "as_uint"
        lines += [
            f"typedef {E} E;",
            f"#define LD(x) {as_float}(((unsigned int)(x)) << 16)",
            f"#define AS_UINT(v) {as_uint}(v)",
            "#define ST(v) st_bf16(v)",
        ]
    else:
        lines += [f"typedef {fr.ct[dtype]} E;", "#define LD(x) ((A)(x))", "#define ST(v) ((E)(v))"]
    fast = fr.cuda and acc == "float32"  # CUDA C: the float functions by their own names
    lines += [
        f"typedef {A} A;",
        f"typedef {L} L;",
        f"typedef {fr.ct['bool']} MB;",
        f"#define INF_A {fr.inf(A)}",
        f"#define EXP2(x) {'exp2f' if fast else 'exp2'}(x)",
        f"#define LOG2(x) {'log2f' if fast else 'log2'}(x)",
        # 16-byte aligned tiles: the unrolled loops over a row then load 4 floats at once
        # (ld.shared.v4: a quarter of the shared-memory instructions of scalar loads)
        f"#define SHARED16 {fr.local.strip()}{' __align__(16)' if fr.cuda else ''}",
        f"#define ALIGN16{'' if fr.cuda else ' __attribute__((aligned(16)))'}",
        f"#define D {head_dim}",
        f"#define DV {value_dim}",
        f"#define ROWS {ROWS}",
        f"#define TILE {TILE}",
    ]
    text = "\n".join(lines) + "\n"
    if dtype == "bfloat16":
        text += fill(_ST_BF16, fr)
    return text


def attention_program(
    dtype: str, head_dim: int, value_dim: int, dialect: str, kernels=None
) -> str:
    """The attention kernels for storage `dtype` ("float32", "float64", "bfloat16"), query/key
    head dim `head_dim` and value dim `value_dim` (each 1..128, compile-time constants) in
    `dialect`: `kernels` (names) or every one these dims take (`attn_fwd`, `attn_bwd_dq`,
    `attn_bwd_dkv`, `attn_bwd_dk`, `attn_bwd_dv`, and `attn_fwd_tiled`, `attn_bwd_dq_tiled`,
    `attn_bwd_dkv_tiled` where `tiled_forward` / `tiled_backward` allow). A backend renders
    only the ones it launches (`launched_kernels`): a smaller program builds faster."""
    from ._attention_bwd import DQ, KEY_KERNELS, key_kernel
    from ._attention_tiled import TILED_FWD, tiled_forward
    from ._attention_tiled_bwd import DEFS, TILED_BWD, UNDEFS, tiled_backward

    _check(dtype, head_dim, value_dim, dialect)
    fr = frame(dialect)
    pieces = {"attn_fwd": _FWD, "attn_bwd_dq": DQ}
    pieces.update({name: key_kernel(name) for name in KEY_KERNELS})
    if tiled_forward(dtype, head_dim, value_dim):
        pieces["attn_fwd_tiled"] = TILED_FWD
    if tiled_backward(dtype, head_dim, value_dim):
        pieces.update({name: DEFS + text + UNDEFS for name, text in TILED_BWD.items()})
    names = list(pieces) if kernels is None else list(kernels)
    unknown = [n for n in names if n not in pieces]
    if unknown:
        raise ValueError(
            f"attention_program: no kernel {unknown} for {dtype} head_dim {head_dim} value_dim "
            f"{value_dim} (have {sorted(pieces)})"
        )
    body = "".join(pieces[n] for n in names)
    # every kernel's parameters end with the mask strides; the dropout arguments follow them
    tail = "const L mq, const L mk) {"
    assert body.count(tail) == len(names), "attention_program: a kernel lost its mask strides"
    body = body.replace(tail, tail[:-3] + DROP_PARAMS + ") {")
    return _head(dtype, head_dim, value_dim, fr) + fill(DROP_HELPERS + body, fr)


def launched_kernels(dtype: str, head_dim: int, value_dim: int) -> tuple[str, ...]:
    """The kernels a backend launches for these dims: the forward and the backward's."""
    return (forward_kernel(dtype, head_dim, value_dim)[0],) + tuple(
        name for name, *_ in backward_kernels(dtype, head_dim, value_dim)
    )


def backward_kernels(dtype: str, head_dim: int, value_dim: int) -> list[tuple[str, str, int, int]]:
    """The backward's launches in order, each (kernel name, side, rows per group, items per
    group): side "q" launches ceil(seq_q / rows) groups per (batch, head), "k" ceil(seq_k /
    rows). The query-side kernel takes (dq, delta, q, k, v, o, dO, lse, mask, ...), the key-side
    ones (dk, dv, q, k, v, dO, lse, delta, mask, ...), as `_attention_bwd.py` lists them."""
    from ._attention_bwd import split_dkv
    from ._attention_tiled_bwd import ROWS as TROWS
    from ._attention_tiled_bwd import THREADS as TTHREADS
    from ._attention_tiled_bwd import tiled_backward

    if tiled_backward(dtype, head_dim, value_dim):
        return [
            ("attn_bwd_dq_tiled", "q", TROWS, TTHREADS),
            ("attn_bwd_dkv_tiled", "k", TROWS, TTHREADS),
        ]
    keys = ("attn_bwd_dk", "attn_bwd_dv") if split_dkv(head_dim, value_dim) else ("attn_bwd_dkv",)
    return [("attn_bwd_dq", "q", ROWS, ROWS)] + [(n, "k", ROWS, ROWS) for n in keys]


def forward_kernel(dtype: str, head_dim: int, value_dim: int) -> tuple[str, int]:
    """(kernel name, items per work-group) of the forward for these storage dtype and dims:
    the register-blocked `attn_fwd_tiled` (128 items) where it applies, else `attn_fwd` (64).
    Both take the same arguments and cover `ROWS` queries per group."""
    from ._attention_tiled import THREADS, tiled_forward

    if tiled_forward(dtype, head_dim, value_dim):
        return "attn_fwd_tiled", THREADS
    return "attn_fwd", ROWS


def attention_groups(rows: int, seq: int, per_group: int = ROWS) -> int:
    """Work-groups of a launch: ceil(seq / per_group) per (batch, head), `rows` = b * h."""
    return rows * -(-seq // per_group)


def scale2(scale: float) -> float:
    """The factor the kernels multiply queries by: the softmax scale in base 2."""
    return float(scale) * LOG2E


def lse_to_natural(lse2):
    """The saved statistic (log2 of the row sum of 2^s) as the natural log-sum-exp."""
    return lse2 * math.log(2.0)
