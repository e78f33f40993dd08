"""The weight-only quantized linear at small batch (decoding: M <= `GEMV_MAX_M` rows), written
once for OpenCL and CUDA: `qlin_gemv`, a work-group per (row, block of WT packed word columns).

Why: `qlin_packed` gives each output one work-item looping over all of K, so at batch 1 an
8192-wide layer has only 8192 work-items each issuing one 4-byte load at a time: far too few
loads in flight to stream the weight at memory speed, which is the whole cost at batch 1.

Here the group's G work-items are WT word columns x KS = G / WT slices of K: item (tw, ks) reads
word column j = block * WT + tw of rows k = ks, ks + KS, ... (the WT items of one k read WT
consecutive words: 32 contiguous bytes a row), unpacks its 32 / bits values with a shift pair
(sign extension), scales and accumulates them in float32 registers (QuantAcc.F32). The KS
partial sums of each output then meet in local memory: all 32 / bits values of a word at once,
a tree of log2(KS) barriers. Scales: per tensor (applied once at the end), per block with the
block a multiple of the values a word holds (one scale load per word: the common case), or any
block (a scale per value). x is read through the cache (all groups read the same K floats).

Sizes: G = 1024 on CUDA GPUs (G * 32 / bits floats of local memory: at most 32 KiB, so 512 for
2-bit), 256 on OpenCL (a kernel there may not get more work-items per group); WT = 8.
"""

from __future__ import annotations

from ._dialect import fill, frame

#: batches up to this many rows take `qlin_gemv`; larger ones `qlin_packed`
GEMV_MAX_M = 8
WT = 8
#: launches so far (tests check the path ran)
LAUNCHES = [0]

_BODY = """
typedef unsigned int U;
#define PER (32 / BITS)
#define SH (32 - BITS)
#define KS (G / WT)
@HEAD@(@G@float* out, @G@const float* x, @G@const U* w, @G@const float* s,
       const L K, const L N, const L words, const L block, const int mode, const L xo,
       const L wo, const L so, const L groups_n) {
  @LOCAL@ float red[PER * G];
  x += xo;
  w += wo;
  s += so;
  const int lid = (int)@LID@;
  const int tw = lid % WT, ks = lid / WT;
  const L g = (L)@GROUP@;
  const L m = g / groups_n, jb = g % groups_n;
  const L j = jb * WT + tw;
  const L nb = block > 0 ? N / block : 1;
  float acc[PER];
  for (int v = 0; v < PER; v++) acc[v] = 0.0f;
  if (j < words) {
    @G@const U* wj = w + j;
    @G@const float* xm = x + m * K;
    if (mode == 0) {  /* per tensor: the scale once, at the end */
      @UNROLL@
      for (L k = ks; k < K; k += KS) {
        const U q = wj[k * words];
        const float xv = xm[k];
        for (int v = 0; v < PER; v++) acc[v] += xv * (float)(((int)(q << (SH - BITS * v))) >> SH);
      }
    } else if (mode == 1) {  /* a block holds whole words: one scale a word */
      const L bi = (j * PER) / block;
      @UNROLL@
      for (L k = ks; k < K; k += KS) {
        const U q = wj[k * words];
        const float xs = xm[k] * s[k * nb + bi];
        for (int v = 0; v < PER; v++) acc[v] += xs * (float)(((int)(q << (SH - BITS * v))) >> SH);
      }
    } else {  /* any block: a scale per value (padding values past N read the last block's) */
      for (L k = ks; k < K; k += KS) {
        const U q = wj[k * words];
        const float xv = xm[k];
        for (int v = 0; v < PER; v++) {
          L bi = (j * PER + v) / block;
          bi = bi < nb ? bi : nb - 1;
          acc[v] += xv * ((float)(((int)(q << (SH - BITS * v))) >> SH) * s[k * nb + bi]);
        }
      }
    }
  }
  for (int v = 0; v < PER; v++) red[(v * KS + ks) * WT + tw] = acc[v];
  @BARRIER@
  for (int st = KS / 2; st > 0; st >>= 1) {
    for (int i = lid; i < PER * st * WT; i += G) {
      const int v = i / (st * WT), r = i % (st * WT);
      red[v * KS * WT + r] += red[v * KS * WT + r + st * WT];
    }
    @BARRIER@
  }
  for (int i = lid; i < PER * WT; i += G) {
    const int v = i / WT, t = i % WT;
    const L jj = jb * WT + t, c = jj * PER + v;
    if (jj < words && c < N) {
      const float r = red[v * KS * WT + t];
      out[m * N + c] = mode == 0 ? r * s[0] : r;
    }
  }
}
"""


def gemv_group(rt, bits: int) -> int:
    """Work-items of a `qlin_gemv` group on runtime `rt` for `bits`-bit weights."""
    per = 32 // bits
    top = 1024 if rt.dialect == "cuda" and not rt.cpu else 256
    g = min(top, 8192 // per, rt.max_group)
    return max(g, WT * 2)


def gemv_program(dialect: str, bits: int, group: int) -> str:
    """`qlin_gemv` for `bits`-bit weights and work-groups of `group` items, in `dialect`."""
    fr = frame(dialect)
    if fr.cuda:
        head = f'extern "C" __global__ void __launch_bounds__({group}) qlin_gemv'
        unroll = "#pragma unroll 4"
    else:
        head = f"__kernel __attribute__((reqd_work_group_size({group}, 1, 1))) void qlin_gemv"
        unroll = "#pragma unroll 4"
    src = _BODY.replace("@HEAD@", head).replace("@UNROLL@", unroll)
    pre = f"typedef {fr.ct['int64']} L;\n#define BITS {bits}\n#define G {group}\n#define WT {WT}\n"
    return pre + fill(src, fr)


def run_gemv(rt, out, x, w, s, m: int, k: int, n: int, words: int, bits: int, block: int, offs):
    """Launch `qlin_gemv`: out [m, n] float32 (contiguous) from x [m, k] at element offset
    offs[0], packed weight words [k, words] at offs[1], scales at offs[2]."""
    per = 32 // bits
    g = gemv_group(rt, bits)
    mode = 0 if block <= 0 else (1 if block % per == 0 else 2)
    groups_n = -(-words // WT)
    kern = rt.kernel(("qlin_gemv", bits, g), "qlin_gemv", lambda: gemv_program(rt.dialect, bits, g))
    args = [out, x, w, s, (k, "int64"), (n, "int64"), (words, "int64"), (max(block, 0), "int64"),
            (mode, "int32"), *((o, "int64") for o in offs), (groups_n, "int64")]  # fmt: skip
    rt.call(kern, groups_n * m * g, args, group=g)
    LAUNCHES[0] += 1
