"""The mma.m16n8k16 fragment layouts of `_mma_layout.py` (the expressions the tensor-core
attention kernel is written with) against the PTX ISA's figures, in numpy: every element held
exactly once, the inverse maps inverting the forward ones, a warp's fragments reassembling the
matrices and multiplying to A @ B, and the C -> A register reuse of FlashAttention-2."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda._mma_layout import FORWARD, INVERSE, LDSM, TF32, c_macros, evaluate

LANES = range(32)


def a_coords(lane, r, h):
    return evaluate("A_ROW", lane=lane, r=r), evaluate("A_COL", lane=lane, r=r, h=h)


def b_coords(lane, r, h):
    return evaluate("B_K", lane=lane, r=r, h=h), evaluate("B_N", lane=lane)


def c_coords(lane, e):
    return evaluate("C_ROW", lane=lane, e=e), evaluate("C_COL", lane=lane, e=e)


def test_ptx_isa_spot_values():
    # hand-derived from the PTX ISA text (groupID = lane >> 2, threadID_in_group = lane % 4;
    # A element a_i: row groupID (+8 for i in 2,3,6,7), col 2 tig + (i & 1) (+8 for i >= 4))
    # lane 5: groupID 1, tig 1; lane 30: groupID 7, tig 2
    assert [a_coords(5, r, 0) for r in range(4)] == [(1, 2), (9, 2), (1, 10), (9, 10)]
    assert [a_coords(30, r, 1) for r in range(4)] == [(7, 5), (15, 5), (7, 13), (15, 13)]
    assert [b_coords(5, r, h) for r in range(2) for h in range(2)] == [(2, 1), (3, 1), (10, 1), (11, 1)]
    assert [c_coords(30, e) for e in range(4)] == [(7, 4), (7, 5), (15, 4), (15, 5)]


@pytest.mark.parametrize(
    "coords,shape,regs,halves",
    [(a_coords, (16, 16), 4, 2), (b_coords, (16, 8), 2, 2), (c_coords, (16, 8), 4, 1)],
    ids=["A", "B", "C"],
)
def test_each_element_is_held_once(coords, shape, regs, halves):
    seen = np.zeros(shape, int)
    for lane in LANES:
        for r in range(regs):
            for h in range(halves):
                seen[coords(lane, r, h) if halves > 1 else coords(lane, r)] += 1
    assert (seen == 1).all()


def test_inverse_maps_invert():
    for lane in LANES:
        for r in range(4):
            for h in range(2):
                row, col = a_coords(lane, r, h)
                assert (evaluate("A_LANE", row=row, col=col), evaluate("A_REG", row=row, col=col),
                        evaluate("A_HALF", col=col)) == (lane, r, h)  # fmt: skip
        for r in range(2):
            for h in range(2):
                k, n = b_coords(lane, r, h)
                got = (evaluate("B_LANE", k=k, n=n), evaluate("B_REG", k=k), evaluate("B_HALF", k=k))
                assert got == (lane, r, h)


def test_fragments_multiply_to_a_at_b():
    """What each lane holds of A and B, summed as the instruction does for its C elements."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 16)), rng.standard_normal((16, 8))
    fa = {(ln, r, h): a[a_coords(ln, r, h)] for ln in LANES for r in range(4) for h in range(2)}
    fb = {(ln, r, h): b[b_coords(ln, r, h)] for ln in LANES for r in range(2) for h in range(2)}
    got = np.zeros((16, 8))
    for lane in LANES:
        for e in range(4):
            row, col = c_coords(lane, e)
            got[row, col] = sum(
                fa[evaluate("A_LANE", row=row, col=kk), evaluate("A_REG", row=row, col=kk),
                   evaluate("A_HALF", col=kk)]
                * fb[evaluate("B_LANE", k=kk, n=col), evaluate("B_REG", k=kk), evaluate("B_HALF", k=kk)]
                for kk in range(16)
            )  # fmt: skip
    np.testing.assert_allclose(got, a @ b, rtol=1e-12)


def test_score_fragment_is_the_next_a_fragment():
    # FA2: C tiles 2kk and 2kk + 1 (16 x 8 each) of a lane are its A registers of k16 step kk:
    # register r = tile 2kk + (r >> 1), elements 2 (r & 1) + h (the kernel's pack2 pairs)
    for lane in LANES:
        for r in range(4):
            for h in range(2):
                row, col = c_coords(lane, 2 * (r & 1) + h)
                assert a_coords(lane, r, h) == (row, col + 8 * (r >> 1))


def test_c_macros_are_the_same_expressions():
    text = c_macros()
    for name, (params, expr) in {**FORWARD, **INVERSE, **TF32, **LDSM}.items():
        assert f"#define {name}({', '.join(params)}) ({expr})\n" in text
    with pytest.raises(ValueError, match="A_ROW: takes"):
        evaluate("A_ROW", lane=1)


def t_a(lane, r):
    return evaluate("T_A_ROW", lane=lane, r=r), evaluate("T_A_COL", lane=lane, r=r)


def t_b(lane, r):
    return evaluate("T_B_K", lane=lane, r=r), evaluate("T_B_N", lane=lane)


def test_tf32_layout_against_the_ptx_isa():
    # m16n8k8 .tf32 (PTX ISA): A row groupID for a0, a2 and +8 for a1, a3; column tig for a0,
    # a1 and tig + 4 for a2, a3; B row (k) tig for b0, tig + 4 for b1, column groupID
    assert [t_a(5, r) for r in range(4)] == [(1, 1), (9, 1), (1, 5), (9, 5)]
    assert [t_b(30, r) for r in range(2)] == [(2, 7), (6, 7)]
    seen_a, seen_b = np.zeros((16, 8), int), np.zeros((8, 8), int)
    for lane in LANES:
        for r in range(4):
            seen_a[t_a(lane, r)] += 1
            row, col = t_a(lane, r)
            assert (evaluate("T_A_LANE", row=row, col=col), evaluate("T_A_REG", row=row, col=col)) == (lane, r)
        for r in range(2):
            seen_b[t_b(lane, r)] += 1
            k, n = t_b(lane, r)
            assert (evaluate("T_B_LANE", k=k, n=n), evaluate("T_B_REG", k=k)) == (lane, r)
    assert (seen_a == 1).all() and (seen_b == 1).all()


def test_tf32_score_fragment_with_permuted_keys_multiplies_to_p_at_v():
    """A lane's C elements of an 8-key score tile as its A registers of a k8 step (T_P_E), V
    read in the permuted key order (T_P_KEY): the warp's product is P @ V."""
    rng = np.random.default_rng(1)
    p, v = rng.standard_normal((16, 8)), rng.standard_normal((8, 8))
    a = {(ln, r): p[c_coords(ln, evaluate("T_P_E", r=r))] for ln in LANES for r in range(4)}
    b = {(ln, r): v[evaluate("T_P_KEY", k=t_b(ln, r)[0]), t_b(ln, r)[1]] for ln in LANES for r in range(2)}
    got = np.zeros((16, 8))
    for lane in LANES:
        for e in range(4):
            row, col = c_coords(lane, e)
            got[row, col] = sum(
                a[evaluate("T_A_LANE", row=row, col=kk), evaluate("T_A_REG", row=row, col=kk)]
                * b[evaluate("T_B_LANE", k=kk, n=col), evaluate("T_B_REG", k=kk)]
                for kk in range(8)
            )
    np.testing.assert_allclose(got, p @ v, rtol=1e-12)


def ldmatrix_isa(mem, addr, trans):
    """`ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16` as the PTX ISA states it, written
    without the maps: lane t gives the address (row, column) of row t % 8 of matrix t // 8;
    lane t receives in register i the elements 2 (t % 4), 2 (t % 4) + 1 of row t // 4 of
    matrix i, or with .trans elements (row 2 (t % 4) + h, column t // 4)."""
    out = {}
    for t in LANES:
        for i in range(4):
            for h in range(2):
                if trans:
                    r, c = addr[8 * i + 2 * (t % 4) + h], t // 4
                else:
                    r, c = addr[8 * i + t // 4], 2 * (t % 4) + h
                out[t, i, h] = mem[r[0], r[1] + c]
    return out


def test_ldmatrix_maps_are_the_isa_mapping():
    mem = np.arange(40 * 40).reshape(40, 40)
    rng = np.random.default_rng(2)
    addr = [(int(a), int(b)) for a, b in zip(rng.integers(0, 40, 32), rng.integers(0, 32, 32))]
    for trans, (rn, cn) in ((False, ("LD_ROW", "LD_COL")), (True, ("LDT_ROW", "LDT_COL"))):
        want = ldmatrix_isa(mem, addr, trans)
        for (t, i, h), v in want.items():
            row, col = evaluate(rn, lane=t, h=h), evaluate(cn, lane=t, h=h)
            src = addr[evaluate("LD_LANE", i=i, row=row)]
            assert mem[src[0], src[1] + col] == v


def _rows(rn, cn, r0=0, c0=0):
    return [(r0 + evaluate(rn, lane=t), c0 + evaluate(cn, lane=t)) for t in LANES]


def test_ldmatrix_x4_gives_the_mma_fragments():
    """LA rows of a 16 x 16 block: the A fragment; LB rows of an [n][k] tile: the B fragments
    of two k16 steps (registers 2 s + r: step s, register r); LA rows with .trans of a [k][n]
    tile: the B fragments of n8 tiles 0 and 1 (registers 2 t + r)."""
    rng = np.random.default_rng(3)
    mem = rng.standard_normal((40, 48))
    got = ldmatrix_isa(mem, _rows("LA_ROW", "LA_COL", 5, 8), False)
    for t in LANES:
        for r in range(4):
            for h in range(2):
                row, col = a_coords(t, r, h)
                assert got[t, r, h] == mem[5 + row, 8 + col]
    kt = mem[3:11, 16:48]  # K as [n][k]: 8 keys x 32 dims
    got = ldmatrix_isa(mem, _rows("LB_ROW", "LB_COL", 3, 16), False)
    for t in LANES:
        for s in range(2):
            for r in range(2):
                for h in range(2):
                    k, n = b_coords(t, r, h)
                    assert got[t, 2 * s + r, h] == kt[n, 16 * s + k]
    v = mem[7:23, 8:24]  # V as [k][n]: 16 keys x 16 dims
    got = ldmatrix_isa(mem, _rows("LA_ROW", "LA_COL", 7, 8), True)
    for t in LANES:
        for nt in range(2):
            for r in range(2):
                for h in range(2):
                    k, n = b_coords(t, r, h)
                    assert got[t, 2 * nt + r, h] == v[k, 8 * nt + n]


def test_ldmatrix_trans_lt_rows_give_the_a_fragment_of_the_transpose():
    """LT rows with .trans of a [k][m] tile (the fused backward's dSᵗ, keys x queries): the A
    fragment of its transpose's 16 x 16 block (rows m, columns k)."""
    rng = np.random.default_rng(4)
    mem = rng.standard_normal((40, 48))
    st = mem[6:22, 16:32]  # [k][m]: 16 keys x 16 queries
    got = ldmatrix_isa(mem, _rows("LT_ROW", "LT_COL", 6, 16), True)
    for t in LANES:
        for r in range(4):
            for h in range(2):
                row, col = a_coords(t, r, h)
                assert got[t, r, h] == st[col, row]
