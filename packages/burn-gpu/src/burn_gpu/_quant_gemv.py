"""The weight-only quantized linear at small batch (decoding: M <= `GEMV_MAX_M` rows), written
once for OpenCL and CUDA: `qlin_gemv`, a work-group per (row, block of WT * VEC packed word
columns).

Why: `qlin_packed` gives each output one work-item looping over all of K, so at batch 1 an
8192-wide layer has only 8192 work-items each issuing one 4-byte load at a time: far too few
loads in flight to stream the weight at memory speed, which is the whole cost at batch 1.

Here the group's G work-items are WT word-column items x KS = G / WT slices of K: item (tw, ks)
reads VEC consecutive words j0 = (block * WT + tw) * VEC .. j0 + VEC - 1 of rows k = ks, ks + KS,
... (VEC = 4: one 16-byte load a row; the WT items of one k read WT * VEC * 4 contiguous bytes),
unpacks its VEC * 32 / bits values with a shift pair (sign extension), scales and accumulates
them in float32 registers (QuantAcc.F32). The KS partial sums of each output then meet: `shfl`
(CUDA) sums the slices of a warp with `__shfl_xor_sync` and the G / 32 warps' sums in shared
memory after one barrier; else a tree in local memory (log2(KS) barriers). `xs`: x's K floats
staged in local memory first (one barrier) instead of read through the cache. Scales: per
tensor (applied once at the end), per block with the block a multiple of the values a word
holds (one scale load per word: the common case), or any block (a scale per value).

`GemvVariant` holds these choices (G, WT, VEC, shfl, xs, unroll); `default_variant` picks one
per runtime and shape (`DEFAULT_CUDA` / `DEFAULT_OPENCL`, the one-line switch after GPU
measurements: benches/probes/qgemv_probe.py times the others). A variant that cannot serve a
shape (VEC words not dividing a row, an unaligned weight, too much local memory) falls back
to VEC = 1 / no staging, so every variant is correct for every shape.
"""

from __future__ import annotations

from typing import NamedTuple

from ._dialect import fill, frame

#: batches up to this many rows take `qlin_gemv`; larger ones `qlin_packed`
GEMV_MAX_M = 8
#: launches so far (tests check the path ran)
LAUNCHES = [0]
#: local memory a group may use, in floats (48 KiB: CUDA's static shared memory limit)
LOCAL_FLOATS = 12288


class GemvVariant(NamedTuple):
    """One shape of `qlin_gemv`: `g` work-items a group (0: the runtime's `gemv_group`), `wt`
    word-column items, `vec` words an item reads a row (1, 2 or 4), `shfl` warp-shuffle
    reduction (CUDA only; ignored elsewhere), `xs` x staged in local memory, `unroll` of the
    K loop."""

    g: int = 0
    wt: int = 8
    vec: int = 1
    shfl: bool = False
    xs: bool = False
    unroll: int = 4

    @property
    def tag(self) -> str:
        """A short name (the probe's JSON key)."""
        s = f"g{self.g}w{self.wt}v{self.vec}u{self.unroll}"
        return s + ("s" if self.shfl else "") + ("x" if self.xs else "")


#: the variant before issue 39's tuning (one word an item, a tree reduction)
BASELINE = GemvVariant(g=0, wt=8, vec=1)
#: CUDA, per-tensor scale, 4 (and 2) bits: 16-byte loads, 2 items a row = 32 contiguous bytes,
#: warp-shuffle reduction. Chosen from the H200 probe (benches/probes/qgemv_probe.py, 8192^2,
#: batch 1, kernel time): 15.8 us (2.1 TB/s) against the baseline's 18.5
DEFAULT_CUDA = GemvVariant(g=512, wt=2, vec=4, shfl=True)
#: CUDA, per-tensor 8 bits: 4 items a row (64 contiguous bytes): 23.5 us against 29.2 for
#: DEFAULT_CUDA and 36.4 for the baseline (the same probe)
CUDA_INT8 = GemvVariant(g=512, wt=4, vec=4, shfl=True)
#: CUDA, block scales (one scale load a word): the baseline's one word an item read the
#: scales best: int4 block 32 in 22.3 us against 27.3 for DEFAULT_CUDA (the same probe)
CUDA_BLOCK = BASELINE
#: OpenCL (PoCL and GPUs): groups of at most 256; 16-byte loads through vload4
DEFAULT_OPENCL = GemvVariant(g=256, wt=4, vec=4)
#: kept for callers of the old constant (the baseline's word-column items)
WT = BASELINE.wt


def gemv_group(rt, bits: int) -> int:
    """The baseline's work-items of a `qlin_gemv` group on runtime `rt` for `bits`-bit weights."""
    per = 32 // bits
    top = 1024 if rt.dialect == "cuda" and not rt.cpu else 256
    g = min(top, 8192 // per, rt.max_group)
    return max(g, WT * 2)


def default_variant(rt, bits: int = 4, block: int = 0) -> GemvVariant:
    """The variant `run_gemv` takes on `rt` for `bits`-bit values with scale `block` (0: per
    tensor) when none is given (the H200 measurements above on CUDA)."""
    if rt.dialect != "cuda":
        return DEFAULT_OPENCL
    if block > 0:
        return CUDA_BLOCK
    return CUDA_INT8 if bits == 8 else DEFAULT_CUDA


def resolve(rt, v: GemvVariant, bits: int, k: int, words: int, aligned: bool) -> GemvVariant:
    """`v` made valid for this runtime and shape: g filled in and capped at the runtime's
    group size, vec 1 where VEC words do not divide a row or the weight is not aligned to
    them (and at most 32 / (32 / bits): 32 accumulators), no shuffle outside CUDA (or with fewer than a warp), no x staging past local memory."""
    per = 32 // bits
    if any(p & (p - 1) for p in (v.g, v.wt, v.vec)) or v.vec > 4:
        raise ValueError(f"qlin_gemv: g, wt, vec must be powers of two (vec <= 4), got {v}")
    g = v.g or gemv_group(rt, bits)
    g = min(g, rt.max_group)
    wt = min(v.wt, g // 2)
    # at most 32 float accumulators an item: 2-bit x 4 words (64) spilled on sm_90 (ptxas -v)
    vec = min(v.vec, max(1, 32 // per)) if (words % v.vec == 0 and aligned) else 1
    shfl = bool(v.shfl) and rt.dialect == "cuda" and g % 32 == 0 and wt <= 32
    red = per * vec * (g // 32 * wt if shfl else g)
    xs = bool(v.xs) and k <= LOCAL_FLOATS - red
    if red > LOCAL_FLOATS:  # too many partial sums for local memory: halve the group
        return resolve(rt, v._replace(g=g // 2), bits, k, words, aligned)
    return GemvVariant(g, wt, vec, shfl, xs, v.unroll)


_BODY = """
typedef unsigned int U;
#define PER (32 / BITS)
#define SH (32 - BITS)
#define KS (G / WT)
#define NA (PER * VEC)
#define UNPACK(q, v) ((float)(((int)((q) << (SH - BITS * (v)))) >> SH))
@HEAD@(@G@float* out, @G@const float* x, @G@const U* w, @G@const float* s,
       const L K, const L N, const L words, const L block, const int mode, const L xo,
       const L wo, const L so, const L groups_n, @G@const float* b, const L bo, const int has_b) {
  @LOCAL@ float red[RED];
#if XS
  @LOCAL@ float xl[XS];
#endif
  x += xo;
  w += wo;
  s += so;
  const int lid = (int)@LID@;
  const int tw = lid % WT, ks = lid / WT;
  const L g = (L)@GROUP@;
  const L m = g / groups_n, jb = g % groups_n;
  const L j0 = (jb * WT + tw) * VEC;
  const L nb = block > 0 ? N / block : 1;
  @G@const float* xm = x + m * K;
#if XS
  for (L k = lid; k < K; k += G) xl[k] = xm[k];
  @BARRIER@
#define XV(k) xl[k]
#else
#define XV(k) xm[k]
#endif
  float acc[NA];
  for (int v = 0; v < NA; v++) acc[v] = 0.0f;
  if (j0 < words) {  /* VEC > 1: words % VEC == 0, so all VEC words exist */
    @G@const U* wj = w + j0;
    U q[VEC];
    if (mode == 0) {  /* per tensor: the scale once, at the end */
      @UNROLL@
      for (L k = ks; k < K; k += KS) {
        LOADQ(q, wj + k * words);
        const float xv = XV(k);
        for (int u = 0; u < VEC; u++)
          for (int v = 0; v < PER; v++) acc[u * PER + v] += xv * UNPACK(q[u], v);
      }
    } else if (mode == 1) {  /* a block holds whole words: one scale a word */
      @UNROLL@
      for (L k = ks; k < K; k += KS) {
        LOADQ(q, wj + k * words);
        const float xv = XV(k);
        for (int u = 0; u < VEC; u++) {
          const float xs = xv * s[k * nb + ((j0 + u) * PER) / block];
          for (int v = 0; v < PER; v++) acc[u * PER + v] += xs * UNPACK(q[u], v);
        }
      }
    } else {  /* any block: a scale per value (padding values past N read the last block's) */
      for (L k = ks; k < K; k += KS) {
        LOADQ(q, wj + k * words);
        const float xv = XV(k);
        for (int u = 0; u < VEC; u++)
          for (int v = 0; v < PER; v++) {
            L bi = ((j0 + u) * PER + v) / block;
            bi = bi < nb ? bi : nb - 1;
            acc[u * PER + v] += xv * (UNPACK(q[u], v) * s[k * nb + bi]);
          }
      }
    }
  }
#if SHFL
  /* lanes of one word-column item tw differ by multiples of WT: sum them within the warp */
  for (int o = 16; o >= WT; o >>= 1)
    for (int v = 0; v < NA; v++) acc[v] += __shfl_xor_sync(0xffffffffu, acc[v], o);
  if ((lid & 31) < WT)
    for (int v = 0; v < NA; v++) red[(v * (G / 32) + lid / 32) * WT + tw] = acc[v];
  @BARRIER@
  for (int i = lid; i < NA * WT; i += G) {
    const int v = i / WT, t = i % WT;
    float r = 0.0f;
    for (int wp = 0; wp < G / 32; wp++) r += red[(v * (G / 32) + wp) * WT + t];
#else
  for (int v = 0; v < NA; v++) red[(v * KS + ks) * WT + tw] = acc[v];
  @BARRIER@
  for (int st = KS / 2; st > 0; st >>= 1) {
    for (int i = lid; i < NA * st * WT; i += G) {
      const int v = i / (st * WT), r = i % (st * WT);
      red[v * KS * WT + r] += red[v * KS * WT + r + st * WT];
    }
    @BARRIER@
  }
  for (int i = lid; i < NA * WT; i += G) {
    const int v = i / WT, t = i % WT;
    const float r = red[v * KS * WT + t];
#endif
    const L jj = (jb * WT + t) * VEC + v / PER, c = jj * PER + v % PER;
    if (jj < words && c < N) out[m * N + c] = (mode == 0 ? r * s[0] : r) + (has_b ? b[bo + c] : 0.0f);
  }
}
"""

# VEC words of a row into q[]: one 16-byte load for 4 (CUDA: int4, whose alignment the host
# checked; OpenCL: vload4, element alignment), else word by word
_LOAD_CUDA = {
    4: "#define LOADQ(q, p) { const int4 t_ = *(const int4*)(p); "
    "q[0] = (U)t_.x; q[1] = (U)t_.y; q[2] = (U)t_.z; q[3] = (U)t_.w; }\n",
}
_LOAD_OPENCL = {
    4: "#define LOADQ(q, p) { const uint4 t_ = vload4(0, p); "
    "q[0] = t_.s0; q[1] = t_.s1; q[2] = t_.s2; q[3] = t_.s3; }\n",
}
_LOAD_ANY = "#define LOADQ(q, p) { for (int u_ = 0; u_ < VEC; u_++) q[u_] = (p)[u_]; }\n"


def gemv_program(dialect: str, bits: int, group: int, variant: GemvVariant | None = None) -> str:
    """`qlin_gemv` for `bits`-bit weights and work-groups of `group` items, in `dialect`
    (`variant`: an already resolved `GemvVariant`; default the baseline's choices)."""
    v = (variant or BASELINE)._replace(g=group)
    per = 32 // bits
    fr = frame(dialect)
    if fr.cuda:
        head = f'extern "C" __global__ void __launch_bounds__({group}) qlin_gemv'
        load = _LOAD_CUDA.get(v.vec, _LOAD_ANY)
    else:
        head = f"__kernel __attribute__((reqd_work_group_size({group}, 1, 1))) void qlin_gemv"
        load = _LOAD_OPENCL.get(v.vec, _LOAD_ANY)
    shfl = int(v.shfl and fr.cuda)
    red = per * v.vec * (group // 32 * v.wt if shfl else group)
    src = _BODY.replace("@HEAD@", head).replace("@UNROLL@", f"#pragma unroll {v.unroll}")
    pre = (
        f"typedef {fr.ct['int64']} L;\n#define BITS {bits}\n#define G {group}\n"
        f"#define WT {v.wt}\n#define VEC {v.vec}\n#define SHFL {shfl}\n#define RED {red}\n"
        f"#define XS {LOCAL_FLOATS - red if v.xs else 0}\n" + load
    )
    return pre + fill(src, fr)


def _aligned(rt, w, wo: int, vec: int) -> bool:
    """Whether the weight's words start on a VEC-word boundary (16 bytes for VEC = 4)."""
    if wo % vec:
        return False
    check = getattr(rt, "aligned", None)
    return True if check is None or vec == 1 else bool(check(w))


class GemvPlan:
    """One launch of `qlin_gemv` prepared for a (runtime, shape, scheme, variant): the kernel,
    the grid and the scalar arguments, so a repeated call (decoding) only passes the arrays."""

    __slots__ = ("group", "items", "kernel", "rt", "scalars", "variant")

    def __init__(self, rt, m, k, n, words, bits, block, offs, aligned, variant=None):
        per = 32 // bits
        self.rt = rt
        v = resolve(rt, variant or default_variant(rt, bits, block), bits, k, words, aligned)
        mode = 0 if block <= 0 else (1 if block % per == 0 else 2)
        groups_n = -(-words // (v.wt * v.vec))
        self.variant = v
        self.group = v.g
        self.items = groups_n * m * v.g
        key = ("qlin_gemv", bits, v)
        self.kernel = rt.kernel(key, "qlin_gemv", lambda: gemv_program(rt.dialect, bits, v.g, v))
        self.scalars = [(k, "int64"), (n, "int64"), (words, "int64"), (max(block, 0), "int64"),
                        (mode, "int32"), *((o, "int64") for o in offs), (groups_n, "int64")]  # fmt: skip

    def __call__(self, rt, out, x, w, s, bias=None, bias_offset: int = 0) -> None:
        """out = x @ W (+ bias [n] float32 from element `bias_offset`, added in the store)."""
        tail = [s, (0, "int64"), (0, "int32")] if bias is None else [bias, (bias_offset, "int64"), (1, "int32")]
        rt.call(self.kernel, self.items, [out, x, w, s, *self.scalars, *tail], group=self.group)
        LAUNCHES[0] += 1


_PLANS: dict = {}


def plan_for(rt, w, m: int, k: int, n: int, words: int, bits: int, block: int, offs,
             variant: GemvVariant | None = None) -> GemvPlan:  # fmt: skip
    """The kept `GemvPlan` of this runtime, shape, scheme, offsets and variant (built once:
    a decoding loop calls the same layers every token). Alignment is part of the key, so a
    weight view that is not 16-byte aligned gets its own (VEC = 1) plan."""
    vec = (variant or default_variant(rt, bits, block)).vec
    aligned = _aligned(rt, w, offs[1], vec)
    key = (id(rt), m, k, n, words, bits, block, tuple(offs), aligned, variant)
    plan = _PLANS.get(key)
    if plan is None or plan.rt is not rt:  # id(rt) reused by a new runtime: rebuild
        if len(_PLANS) > 512:  # many shapes (a sweep): start over rather than grow
            _PLANS.clear()
        plan = _PLANS[key] = GemvPlan(rt, m, k, n, words, bits, block, offs, aligned, variant)
    return plan


def run_gemv(rt, out, x, w, s, m: int, k: int, n: int, words: int, bits: int, block: int, offs,
             variant: GemvVariant | None = None, bias=None, bias_offset: int = 0):  # fmt: skip
    """Launch `qlin_gemv`: out [m, n] float32 (contiguous) from x [m, k] at element offset
    offs[0], packed weight words [k, words] at offs[1], scales at offs[2]; `variant` default
    `default_variant(rt, bits, block)`. Returns the `GemvPlan` it ran (callers may keep it)."""
    plan = plan_for(rt, w, m, k, n, words, bits, block, offs, variant)
    plan(rt, out, x, w, s, bias, bias_offset)
    return plan
