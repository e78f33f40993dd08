"""Reductions, scans and the merge sort, written once for both dialects; one program per
(element, index) type.

Every kernel sees its input as a contiguous `[outer, n, inner]` block starting at `xo` and reduces
or scans along `n`:
- `*_rows`: one work-item per output, a serial loop over `n` (many outputs, short rows);
- `*_tree`: one work-group per (output, chunk of `n`), a local-memory tree inside the group; with
  several chunks a second launch reduces the per-chunk partials (few outputs, long rows);
- `cum*`: one work-item per `[outer, inner]` line;
- `merge_pass`: one pass of a stable bottom-up merge sort of rows (log2 n passes in all);
- `sum_keep_mid`: the sum over outer and inner dims keeping `n` (a conv bias gradient; Cuda
  accumulates it in float64 with 64-bit indices, `bias_acc` / `wide`).
NaN propagates through max/min like numpy; argmax/argmin return the first max (or first NaN);
sums accumulate in the element type (half types: in float32, rounded once per output; a cumsum
rounds each output once from its float32 running sum); a mean is the sum divided by `div` (integers truncate, an
empty mean stays 0). The sources below are written over dialect tokens (`@KERNEL@`, `@G@`,
`@GID@`, ...) that `reduce_program` fills from `frame(dialect)`.
"""

from __future__ import annotations

from ._dialect import fill, frame, storage_head

# (identity, combine(acc, v)) per reduction
_RED = {
    "sum": ("(T)0", "acc + v"),
    "prod": ("(T)1", "acc * v"),
    "max": ("n > 0 ? LOAD(x, base) : (T)0", "(v > acc || IS_NAN(v)) && !IS_NAN(acc) ? v : acc"),
    "min": ("n > 0 ? LOAD(x, base) : (T)0", "(v < acc || IS_NAN(v)) && !IS_NAN(acc) ? v : acc"),
}
_SCAN = {
    "cumsum": "acc + v",
    "cumprod": "acc * v",
    "cummax": _RED["max"][1],
    "cummin": _RED["min"][1],
}


def _rows(name: str, init: str, comb: str) -> str:
    fin = "MEANDIV(acc, div)" if name == "sum" else "acc"
    return f"""
@KERNEL@{name}_rows(@G@S* o, @G@const S* x, int xo, int outer, int n,
                          int inner, int div) {{
  int outs = outer * inner;
  for (int i = @GID@; i < outs; i += @GSIZE@) {{
    int a = i / inner, b = i - a * inner;
    int base = xo + a * n * inner + b;
    T acc = {init};
    for (int k = 0; k < n; ++k) {{ T v = LOAD(x, base + k * inner); acc = {comb}; }}
    STORE(o, i, {fin});
  }}
}}
"""


def _tree(name: str, init: str, comb: str) -> str:
    """Group g reduces chunk (g % chunks) of output (g / chunks)."""
    fin = "MEANDIV(acc, div)" if name == "sum" else "acc"
    first = "LOAD(x, base + lo * inner)" if init.startswith("n > 0") else init
    return f"""
@KERNEL@{name}_tree(@G@S* o, @G@const S* x, int xo, int outer, int n,
                          int inner, int chunks, int div) {{
  @LOCAL@T part[RWG];
  int g = @GROUP@, lid = @LID@;
  int oi = g / chunks, c = g - oi * chunks;
  int a = oi / inner, b = oi - a * inner;
  int base = xo + a * n * inner + b;
  int per = (n + chunks - 1) / chunks, lo = c * per, hi = min(n, lo + per);
  T acc = {first};
  for (int k = lo + lid; k < hi; k += RWG) {{ T v = LOAD(x, base + k * inner); acc = {comb}; }}
  part[lid] = acc;
  @BARRIER@
  for (int s = RWG / 2; s > 0; s >>= 1) {{
    if (lid < s) {{ T v = part[lid + s]; acc = part[lid]; part[lid] = {comb}; }}
    @BARRIER@
  }}
  if (lid == 0) {{ acc = part[0]; STORE(o, g, chunks > 1 ? acc : {fin}); }}
}}
"""


def _arg(name: str, better: str) -> str:
    return f"""
@KERNEL@{name}_rows(@G@I* o, @G@const S* x, int xo, int outer, int n,
                          int inner) {{
  int outs = outer * inner;
  for (int i = @GID@; i < outs; i += @GSIZE@) {{
    int a = i / inner, b = i - a * inner;
    int base = xo + a * n * inner + b;
    T best = LOAD(x, base); int bi = 0;
    for (int k = 1; k < n; ++k) {{
      T v = LOAD(x, base + k * inner);
      if (({better}) && !IS_NAN(best)) {{ best = v; bi = k; }}
    }}
    o[i] = (I)bi;
  }}
}}
"""


def _scan(name: str, comb: str) -> str:
    return f"""
@KERNEL@{name}(@G@S* o, @G@const S* x, int xo, int outer, int n, int inner) {{
  int lines = outer * inner;
  for (int i = @GID@; i < lines; i += @GSIZE@) {{
    int a = i / inner, b = i - a * inner;
    int base = a * n * inner + b;
    T acc = LOAD(x, xo + base);
    STORE(o, base, acc);
    for (int k = 1; k < n; ++k) {{ T v = LOAD(x, xo + base + k * inner); acc = {comb}; STORE(o, base + k * inner, acc); }}
  }}
}}
"""


_MERGE = """
/* a strictly before b: ascending puts NaN last, descending puts NaN first (numpy's order) */
@DEV@int before(T a, T b, int desc) {
  if (desc) return a > b || (IS_NAN(a) && !IS_NAN(b));
  return a < b || (IS_NAN(b) && !IS_NAN(a));
}
@KERNEL@merge_pass(@G@S* ko, @G@I* io, @G@const S* ki,
                         @G@const I* ii, int total, int n, int width, int desc, int init) {
  for (int g = @GID@; g < total; g += @GSIZE@) {
    int row = g / n, i = g - row * n;
    int rb = row * n;
    int bs = (i / (2 * width)) * 2 * width;
    int mid = min(bs + width, n), end = min(bs + 2 * width, n);
    T key = LOAD(ki, rb + i);
    int pos;
    if (i < mid) {  /* left run: count right-run elements strictly before key */
      int lo = mid, hi = end;
      while (lo < hi) { int m = (lo + hi) >> 1; if (before(LOAD(ki, rb + m), key, desc)) lo = m + 1; else hi = m; }
      pos = bs + (i - bs) + (lo - mid);
    } else {  /* right run: count left-run elements not after key (ties keep left first) */
      int lo = bs, hi = mid;
      while (lo < hi) { int m = (lo + hi) >> 1; if (!before(key, LOAD(ki, rb + m), desc)) lo = m + 1; else hi = m; }
      pos = bs + (i - mid) + (lo - bs);
    }
    STORE(ko, rb + pos, key);
    io[rb + pos] = init ? (I)i : ii[rb + i];
  }
}
"""


# Sum over the outer and inner dims of [outer, n, inner], keeping n: a conv bias gradient
# (sum over batch and pixels per channel) in one launch, a work-group per kept index.
_SUM_KEEP_MID = """
@KERNEL@sum_keep_mid(@G@S* o, @G@const S* x, const KX xo, const KX outer, const KX n,
                     const KX inner) {
  @LOCAL@KA part[RWG];
  const KX c = @GROUP@;
  const int lid = @LID@;
  const KX total = outer * inner;
  /* element k = a * inner + b; a and b step by (RWG / inner, RWG % inner) per iteration: one
     division per item, not one (64-bit with `wide`) per element; the same elements in the same
     order */
  const KX da = RWG / inner, db = RWG - da * inner;
  KX a = lid / inner, b = lid - a * inner;
  KA acc = (KA)0;
  for (KX k = lid; k < total; k += RWG) {
    acc += (KA)LOAD(x, xo + (a * n + c) * inner + b);
    a += da; b += db;
    if (b >= inner) { b -= inner; ++a; }
  }
  part[lid] = acc;
  @BARRIER@
  for (int s = RWG / 2; s > 0; s >>= 1) {
    if (lid < s) part[lid] += part[lid + s];
    @BARRIER@
  }
  if (lid == 0) STORE(o, c, (T)part[0]);
}
"""


def nan_mean_head(dtype: str) -> str:
    """`IS_NAN(x)` and `MEANDIV(a, d)` (a sum divided by a count) for element type `dtype`."""
    if dtype.startswith(("float", "bfloat")):
        return "#define IS_NAN(x) isnan(x)\n#define MEANDIV(a, d) (d == 1 ? a : a / (T)d)\n"
    # integer mean truncates; an empty mean (d == 0) stays 0 instead of trapping
    return "#define IS_NAN(x) 0\n#define MEANDIV(a, d) (d <= 1 ? a : (T)(a / d))\n"


def reduce_program(
    dtype: str, index_dtype: str, rwg: int, dialect: str, bias_acc: str = "", wide: bool = False
) -> str:
    """Every reduction kernel of element type `dtype` (index outputs `index_dtype`, dtype names)
    with work-groups of `rwg` items (a power of two) for the tree kernels, in `dialect`.
    `sum_keep_mid` accumulates in `bias_acc` (a dtype name; default `dtype`) and indexes in
    64 bits with `wide` (its geometry arguments are then 64-bit too)."""
    fr = frame(dialect)
    head = fr.pragma([dtype, bias_acc or dtype]) + storage_head(fr, dtype)
    head += f"typedef {fr.ct[index_dtype]} I;\n#define RWG {rwg}\n"
    head += f"typedef {fr.compute(bias_acc or dtype)} KA;\ntypedef {fr.ct['int64'] if wide else 'int'} KX;\n"
    head += nan_mean_head(dtype)
    parts = [head]
    for name, (init, comb) in _RED.items():
        parts.append(_rows(name, init, comb))
        parts.append(_tree(name, init, comb))
    parts.append(_arg("argmax", "v > best || IS_NAN(v)"))
    parts.append(_arg("argmin", "v < best || IS_NAN(v)"))
    for name, comb in _SCAN.items():
        parts.append(_scan(name, comb))
    parts.append(_MERGE)
    parts.append(_SUM_KEEP_MID)
    return fill("".join(parts), fr)
