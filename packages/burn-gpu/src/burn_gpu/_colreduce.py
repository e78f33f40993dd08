"""Column reductions: sum / mean / max / min of x viewed as `[outer, n, inner]` along `n` when
`outer * inner` (the outputs) is small and `n` long, e.g. a Linear bias gradient, the sum over
4,096 rows of a [4096, 512] gradient. The thread-per-output `*_rows` kernel of `_reduce.py` gives
such a shape only 512 threads, each walking a 4,096-long column.

Here a work-group is a `TY x TX` tile (`TX * TY = RWG`, both powers of two, `TX = 1 << ltx`):
its TX items of a row read TX adjacent columns (coalesced along `inner`), its TY rows stride
through one chunk of `n`; the tile's TY partials per column are combined by a fixed local-memory
tree. With several chunks (`ColPlan.chunks > 1`) the first launch, `{op}_cols`, writes one
partial per (outer, chunk, column) in the compute type (float32 for half storage: nothing is
rounded between the passes) and a second launch, `{op}_cols_fin`, reduces those partials the
same way over `[outer, chunks, inner]`. No atomics and a fixed order: the same bits every run
for the same shape (the plan depends on the shape and RWG only, not on the device).

Sums accumulate in the compute type (float32 for float32 and the half types, float64 for
float64; integers in their own type), the result rounded once; a mean is the sum divided by
`div`. max/min propagate NaN like `_reduce.py`'s kernels. The kernels index with 32-bit ints:
callers keep `x.size < 2**31`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from ._dialect import fill, frame, storage_head
from ._reduce import _RED, nan_mean_head

#: the reductions with a column kernel (a mean is `sum` with `div`)
COL_OPS = ("sum", "max", "min")
#: a column reduction runs when the outputs are at most this many (more outputs fill the device
#: with one thread each: `*_rows` is as fast there and needs one launch)
COLS_MAX_OUTS = 1 << 16
#: ... and the reduced dim has at least this many elements
COLS_MIN_N = 32
#: how many work-groups the first pass aims for (about 8 resident 256-item groups per SM of a
#: 132-SM GPU); a fixed number, so a shape always reduces in the same order on any device
TARGET_GROUPS = 1024
#: each item of the first pass reads at least this many rows (fewer chunks below that)
MIN_ROWS_PER_ITEM = 8
#: the widest tile: 32 adjacent columns per row (a warp: one 128-byte line of float32)
MAX_TX = 32


class ColPlan(NamedTuple):
    """Geometry of one column reduction: `ltx` (tile width = 1 << ltx columns), `chunks` (of
    `n`, one group each per column tile; 1: a single launch), `groups` of the first launch and
    `fin_groups` of the second (0 when there is none)."""

    ltx: int
    chunks: int
    groups: int
    fin_groups: int


def use_cols(outer: int, n: int, inner: int) -> bool:
    """Whether a reduction of `[outer, n, inner]` along `n` should take the column kernels:
    a dim other than the last, few outputs, a long enough reduced dim."""
    return inner > 1 and n >= COLS_MIN_N and 0 < outer * inner <= COLS_MAX_OUTS


@lru_cache(maxsize=1024)  # one call on the hot path instead of a dozen (Cuda's host time)
def col_plan(outer: int, n: int, inner: int, rwg: int) -> ColPlan:
    """The tiles and chunks for `[outer, n, inner]` reduced along `n` (n >= 1) by groups of `rwg`
    items (a power of two): depends on the shape and `rwg` only.

    Example:
        >>> col_plan(1, 4096, 512, 256)
        ColPlan(ltx=5, chunks=64, groups=1024, fin_groups=16)
    """
    if n < 1 or outer < 1 or inner < 1 or rwg < 1 or rwg & (rwg - 1):
        raise ValueError(
            f"col_plan: expected outer, n, inner >= 1 and rwg a power of two, got "
            f"outer={outer}, n={n}, inner={inner}, rwg={rwg}"
        )
    tx = 1
    while tx < min(inner, MAX_TX, rwg):
        tx *= 2
    ty = rwg // tx
    tiles = outer * (-(-inner // tx))
    chunks = max(1, min(-(-TARGET_GROUPS // tiles), -(-n // (ty * MIN_ROWS_PER_ITEM))))
    per = -(-n // chunks)
    chunks = -(-n // per)  # no empty chunk
    return ColPlan(tx.bit_length() - 1, chunks, tiles * chunks, tiles if chunks > 1 else 0)


def _cols(name: str, init: str, comb: str, fin_pass: bool) -> str:
    """`{name}_cols` (reads S `x`, writes S `o` or, with chunks > 1, T partials `p`) or
    `{name}_cols_fin` (reads the T partials as `[outer, n = chunks, inner]`, writes S `o`)."""
    fin = "MEANDIV(acc, div)" if name == "sum" else "acc"
    if fin_pass:
        head = (
            f"@KERNEL@{name}_cols_fin(@G@S* o, @G@const T* x, int xo, int outer, int n,\n"
            "                          int inner, int ltx, int div) {\n  const int chunks = 1;"
        )
        load = "x[{}]"
    else:
        head = (
            f"@KERNEL@{name}_cols(@G@S* o, @G@T* p, @G@const S* x, int xo, int outer, int n,\n"
            "                          int inner, int chunks, int ltx, int div) {"
        )
        load = "LOAD(x, {})"
    first = load.format("base + lo * inner") if init.startswith("n > 0") else init
    step = load.format("base + k * inner")
    store = f"STORE(o, a * inner + b, {fin})"
    out = store if fin_pass else f"if (chunks == 1) {store}; else p[(a * chunks + c) * inner + b] = acc"
    return f"""
{head}
  @LOCAL@T part[RWG];
  const int lid = @LID@, g = @GROUP@;
  const int tx = 1 << ltx, ty = RWG >> ltx, cx = lid & (tx - 1), cy = lid >> ltx;
  const int tiles = (inner + tx - 1) >> ltx;
  const int c = g % chunks, t = g / chunks, a = t / tiles, b = ((t - a * tiles) << ltx) + cx;
  const int per = (n + chunks - 1) / chunks, lo = c * per, hi = min(n, lo + per);
  const int ok = b < inner;
  const int base = xo + a * n * inner + b;
  T acc = (T)0;
  if (ok) {{
    acc = {first};
    for (int k = lo + cy; k < hi; k += ty) {{ T v = {step}; acc = {comb}; }}
  }}
  part[lid] = acc;
  @BARRIER@
  for (int s = ty >> 1; s > 0; s >>= 1) {{  /* row cy takes row cy + s: a fixed order */
    if (cy < s) {{ T v = part[lid + (s << ltx)]; acc = part[lid]; part[lid] = {comb}; }}
    @BARRIER@
  }}
  if (cy == 0 && ok) {{ acc = part[lid]; {out}; }}
}}
"""


def col_program(dtype: str, rwg: int, dialect: str) -> str:
    """The column kernels (`{op}_cols`, `{op}_cols_fin` for op in `COL_OPS`) of element type
    `dtype` (a dtype name) with work-groups of `rwg` items (a power of two), in `dialect`.
    `{op}_cols(o, p, x, xo, outer, n, inner, chunks, ltx, div)` runs `ColPlan.groups` groups;
    with `chunks > 1` it fills `p` (outer * chunks * inner compute-type elements) and
    `{op}_cols_fin(o, p, 0, outer, chunks, inner, ltx, div)` runs `ColPlan.fin_groups` groups."""
    fr = frame(dialect)
    head = fr.pragma([dtype]) + storage_head(fr, dtype) + f"#define RWG {rwg}\n"
    head += nan_mean_head(dtype)
    parts = [head]
    for name in COL_OPS:
        init, comb = _RED[name]
        parts.append(_cols(name, init, comb, False))
        parts.append(_cols(name, init, comb, True))
    return fill("".join(parts), fr)
