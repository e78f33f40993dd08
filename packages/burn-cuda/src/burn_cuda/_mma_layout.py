"""Where the elements of a warp's `mma.sync.aligned.m16n8k16` operands live: (lane, register,
half) <-> (row, column), written once as integer expressions that are valid C and valid Python.

The tensor-core attention kernel (`_attention_mma.py`) gets them as C macros (`c_macros()`):
its shared-memory fragment loads, its score masking and its stores index with them, and its
CPU stand-in of the `mma` instruction (g++ has no PTX) reassembles the warp's matrices through
the inverse maps. The tests evaluate the same strings in Python (`evaluate`) and check them
against the PTX ISA's figures ("Matrix Fragments for mma.m16n8k16 with floating point type",
with groupID = lane >> 2 and threadID_in_group = lane & 3):

- A, 16 x 16 row-major, four .b32 registers of two 16-bit elements (low half first): register
  r holds row groupID + 8 (r & 1), columns 2 threadID_in_group + 8 (r >> 1) + {0, 1};
- B, 16 x 8 "col", two registers: register r holds rows (k) 2 threadID_in_group + 8 r + {0,
  1} of column (n) groupID;
- C/D, 16 x 8 float32, four registers: element e is row groupID + 8 (e >> 1), column
  2 threadID_in_group + (e & 1).

The C layout of two adjacent n8 tiles is the A layout of one k16 tile (FlashAttention-2 feeds
the scores' fragment to P V without shared memory): A register r of k16 step kk is C tile
2 kk + (r >> 1), elements 2 (r & 1) and 2 (r & 1) + 1.
"""

from __future__ import annotations

#: name -> (parameters, expression): forward maps (lane, register[, half]) -> coordinate
FORWARD = {
    "A_ROW": (("lane", "r"), "((lane) >> 2) + 8 * ((r) & 1)"),
    "A_COL": (("lane", "r", "h"), "2 * ((lane) & 3) + 8 * ((r) >> 1) + (h)"),
    "B_K": (("lane", "r", "h"), "2 * ((lane) & 3) + 8 * (r) + (h)"),
    "B_N": (("lane",), "((lane) >> 2)"),
    "C_ROW": (("lane", "e"), "((lane) >> 2) + 8 * ((e) >> 1)"),
    "C_COL": (("lane", "e"), "2 * ((lane) & 3) + ((e) & 1)"),
}
#: name -> (parameters, expression): inverse maps, coordinate -> (lane, register, half)
INVERSE = {
    "A_LANE": (("row", "col"), "((row) & 7) * 4 + (((col) & 7) >> 1)"),
    "A_REG": (("row", "col"), "((row) >> 3) + 2 * ((col) >> 3)"),
    "A_HALF": (("col",), "((col) & 1)"),
    "B_LANE": (("k", "n"), "(n) * 4 + (((k) & 7) >> 1)"),
    "B_REG": (("k",), "((k) >> 3)"),
    "B_HALF": (("k",), "((k) & 1)"),
}
#: mma.m16n8k8 with .tf32 operands (one 32-bit element per register; C/D as m16n8k16's):
#: A register r holds row groupID + 8 (r & 1), column threadID_in_group + 4 (r >> 1); B
#: register r row (k) threadID_in_group + 4 r of column groupID
TF32 = {
    "T_A_ROW": (("lane", "r"), "((lane) >> 2) + 8 * ((r) & 1)"),
    "T_A_COL": (("lane", "r"), "((lane) & 3) + 4 * ((r) >> 1)"),
    "T_B_K": (("lane", "r"), "((lane) & 3) + 4 * (r)"),
    "T_B_N": (("lane",), "((lane) >> 2)"),
    "T_A_LANE": (("row", "col"), "((row) & 7) * 4 + ((col) & 3)"),
    "T_A_REG": (("row", "col"), "((row) >> 3) + 2 * ((col) >> 2)"),
    "T_B_LANE": (("k", "n"), "(n) * 4 + ((k) & 3)"),
    "T_B_REG": (("k",), "((k) >> 2)"),
    # a C tile of 8 keys as the A operand of a k8 step, keys permuted (the product sums over
    # keys, so B reads V in the same order): A register r is C element T_P_E(r), A column k
    # holds key T_P_KEY(k) of the tile
    "T_P_E": (("r",), "2 * ((r) & 1) + ((r) >> 1)"),
    "T_P_KEY": (("k",), "2 * ((k) & 3) + ((k) >> 2)"),
}
#: `ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16` (PTX ISA, "Warp-level matrix load
#: instruction: ldmatrix"): lanes 8 i .. 8 i + 7 give the addresses of rows 0..7 of matrix i
#: (16 bytes each); register i of a lane then holds two 16-bit elements (low half first) of
#: matrix i: row groupID, columns 2 threadID_in_group + h; with .trans, column groupID of rows
#: 2 threadID_in_group + h (the matrix read column-major). The kernels' row addresses: LA_*
#: for a 16 x 16 block (matrix i at rows 8 (i & 1), columns 8 (i >> 1): the A fragment of a
#: k16 step, or with .trans the B fragments of two n8 tiles from a [k][n] row-major tile); LB_*
#: for an 8 x 32 block (matrix i at columns 8 i: the B fragments of two k16 steps of one n8
#: tile from a [n][k] row-major tile); LT_* with .trans for a 16 x 16 block of a [k][m]
#: row-major tile (matrix i at rows 8 (i >> 1), columns 8 (i & 1): the A fragment of a k16 step
#: of its transpose, as the fused backward reads dS from the dSᵗ it keeps in shared memory)
LDSM = {
    "LD_LANE": (("i", "row"), "8 * (i) + (row)"),
    "LD_ROW": (("lane", "h"), "((lane) >> 2)"),
    "LD_COL": (("lane", "h"), "2 * ((lane) & 3) + (h)"),
    "LDT_ROW": (("lane", "h"), "2 * ((lane) & 3) + (h)"),
    "LDT_COL": (("lane", "h"), "((lane) >> 2)"),
    "LA_ROW": (("lane",), "((lane) & 7) + 8 * (((lane) >> 3) & 1)"),
    "LA_COL": (("lane",), "8 * ((lane) >> 4)"),
    "LB_ROW": (("lane",), "((lane) & 7)"),
    "LB_COL": (("lane",), "8 * ((lane) >> 3)"),
    "LT_ROW": (("lane",), "((lane) & 7) + 8 * ((lane) >> 4)"),
    "LT_COL": (("lane",), "8 * (((lane) >> 3) & 1)"),
}
MAPS = {**FORWARD, **INVERSE, **TF32, **LDSM}


def evaluate(name: str, **values: int) -> int:
    """Map `name` at integer `values` (its parameters by name), by its one expression."""
    params, expr = MAPS[name]
    if set(values) != set(params):
        raise ValueError(f"mma layout {name}: takes {params}, got {sorted(values)}")
    return int(eval(expr, {"__builtins__": {}}, {k: int(v) for k, v in values.items()}))


def c_macros() -> str:
    """Every map as a C function-like macro (`#define A_ROW(lane, r) (...)`)."""
    return "".join(f"#define {n}({', '.join(p)}) ({e})\n" for n, (p, e) in MAPS.items())
