"""OpenCL C of reductions, scans and the merge sort; one program per (element, index) type.

Every kernel sees its input as a contiguous `[outer, n, inner]` block starting at `xo` and reduces
or scans along `n`:
- `*_rows`: one work-item per output, a serial loop over `n` (many outputs, short rows);
- `*_tree`: one work-group per (output, chunk of `n`), a local-memory tree inside the group; with
  several chunks a second launch reduces the per-chunk partials (few outputs, long rows);
- `cum*`: one work-item per `[outer, inner]` line;
- `merge_pass`: one pass of a stable bottom-up merge sort of rows (log2 n passes in all).
NaN propagates through max/min like numpy; argmax/argmin return the first max (or first NaN).
"""

from __future__ import annotations

import numpy as np

from ._runtime import ctype

# (identity, combine(acc, v)) per reduction
_RED = {
    "sum": ("(T)0", "acc + v"),
    "prod": ("(T)1", "acc * v"),
    "max": ("n > 0 ? x[base] : (T)0", "(v > acc || IS_NAN(v)) && !IS_NAN(acc) ? v : acc"),
    "min": ("n > 0 ? x[base] : (T)0", "(v < acc || IS_NAN(v)) && !IS_NAN(acc) ? v : acc"),
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
__kernel void {name}_rows(__global T* o, __global const T* x, int xo, int outer, int n,
                          int inner, int div) {{
  int outs = outer * inner;
  for (int i = get_global_id(0); i < outs; i += get_global_size(0)) {{
    int a = i / inner, b = i - a * inner;
    int base = xo + a * n * inner + b;
    T acc = {init};
    for (int k = 0; k < n; ++k) {{ T v = x[base + k * inner]; acc = {comb}; }}
    o[i] = {fin};
  }}
}}
"""


def _tree(name: str, init: str, comb: str) -> str:
    """Group g reduces chunk (g % chunks) of output (g / chunks)."""
    fin = "MEANDIV(acc, div)" if name == "sum" else "acc"
    first = "x[base + lo * inner]" if init.startswith("n > 0") else init
    return f"""
__kernel void {name}_tree(__global T* o, __global const T* x, int xo, int outer, int n,
                          int inner, int chunks, int div) {{
  __local T part[RWG];
  int g = get_group_id(0), lid = get_local_id(0);
  int oi = g / chunks, c = g - oi * chunks;
  int a = oi / inner, b = oi - a * inner;
  int base = xo + a * n * inner + b;
  int per = (n + chunks - 1) / chunks, lo = c * per, hi = min(n, lo + per);
  T acc = {first};
  for (int k = lo + lid; k < hi; k += RWG) {{ T v = x[base + k * inner]; acc = {comb}; }}
  part[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RWG / 2; s > 0; s >>= 1) {{
    if (lid < s) {{ T v = part[lid + s]; acc = part[lid]; part[lid] = {comb}; }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (lid == 0) {{ acc = part[0]; o[g] = chunks > 1 ? acc : {fin}; }}
}}
"""


def _arg(name: str, better: str) -> str:
    return f"""
__kernel void {name}_rows(__global I* o, __global const T* x, int xo, int outer, int n,
                          int inner) {{
  int outs = outer * inner;
  for (int i = get_global_id(0); i < outs; i += get_global_size(0)) {{
    int a = i / inner, b = i - a * inner;
    int base = xo + a * n * inner + b;
    T best = x[base]; int bi = 0;
    for (int k = 1; k < n; ++k) {{
      T v = x[base + k * inner];
      if (({better}) && !IS_NAN(best)) {{ best = v; bi = k; }}
    }}
    o[i] = (I)bi;
  }}
}}
"""


def _scan(name: str, comb: str) -> str:
    return f"""
__kernel void {name}(__global T* o, __global const T* x, int xo, int outer, int n, int inner) {{
  int lines = outer * inner;
  for (int i = get_global_id(0); i < lines; i += get_global_size(0)) {{
    int a = i / inner, b = i - a * inner;
    int base = a * n * inner + b;
    T acc = x[xo + base];
    o[base] = acc;
    for (int k = 1; k < n; ++k) {{ T v = x[xo + base + k * inner]; acc = {comb}; o[base + k * inner] = acc; }}
  }}
}}
"""


_MERGE = """
/* a strictly before b: ascending puts NaN last, descending puts NaN first (numpy's order) */
int before(T a, T b, int desc) {
  if (desc) return a > b || (IS_NAN(a) && !IS_NAN(b));
  return a < b || (IS_NAN(b) && !IS_NAN(a));
}
__kernel void merge_pass(__global T* ko, __global I* io, __global const T* ki,
                         __global const I* ii, int total, int n, int width, int desc, int init) {
  for (int g = get_global_id(0); g < total; g += get_global_size(0)) {
    int row = g / n, i = g - row * n;
    int rb = row * n;
    int bs = (i / (2 * width)) * 2 * width;
    int mid = min(bs + width, n), end = min(bs + 2 * width, n);
    T key = ki[rb + i];
    int pos;
    if (i < mid) {  /* left run: count right-run elements strictly before key */
      int lo = mid, hi = end;
      while (lo < hi) { int m = (lo + hi) >> 1; if (before(ki[rb + m], key, desc)) lo = m + 1; else hi = m; }
      pos = bs + (i - bs) + (lo - mid);
    } else {  /* right run: count left-run elements not after key (ties keep left first) */
      int lo = bs, hi = mid;
      while (lo < hi) { int m = (lo + hi) >> 1; if (!before(key, ki[rb + m], desc)) lo = m + 1; else hi = m; }
      pos = bs + (i - mid) + (lo - bs);
    }
    ko[rb + pos] = key;
    io[rb + pos] = init ? (I)i : ii[rb + i];
  }
}
"""


# Sum over the outer and inner dims of [outer, n, inner], keeping n: a conv bias gradient
# (sum over batch and pixels per channel) in one launch, a work-group per kept index.
_SUM_KEEP_MID = """
__kernel void sum_keep_mid(__global T* o, __global const T* x, int xo, int outer, int n,
                           int inner) {
  __local T part[RWG];
  int c = get_group_id(0), lid = get_local_id(0);
  int total = outer * inner;
  T acc = (T)0;
  for (int k = lid; k < total; k += RWG) {
    int a = k / inner, b = k - a * inner;
    acc += x[xo + (a * n + c) * inner + b];
  }
  part[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RWG / 2; s > 0; s >>= 1) {
    if (lid < s) part[lid] += part[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) o[c] = part[0];
}
"""


def render(dt: np.dtype, idt: np.dtype, rwg: int) -> str:
    dt = np.dtype(dt)
    head = f"typedef {ctype(dt)} T;\ntypedef {ctype(idt)} I;\n#define RWG {rwg}\n"
    if dt.kind == "f":
        head += "#define IS_NAN(x) isnan(x)\n#define MEANDIV(a, d) (d == 1 ? a : a / (T)d)\n"
    else:  # integer mean truncates; an empty mean (d == 0) stays 0 instead of trapping
        head += "#define IS_NAN(x) 0\n#define MEANDIV(a, d) (d <= 1 ? a : (T)(a / d))\n"
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
    return "".join(parts)
