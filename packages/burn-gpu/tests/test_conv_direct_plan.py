"""The direct conv kernels' plan (`burn_gpu.direct_plan`, `dw_chunks`): which shapes they take
(the documented bounds), that every plan fits what its kernels assume (tiles within a group,
pixel tiles dividing the group, local memory within 32 KiB, accumulators within registers), and
that the weight gradient's chunks cover the pixels without an empty one. Pure Python: the
kernels themselves run in burn-opencl's and burn-cuda's tests."""

from __future__ import annotations

import itertools

import pytest
from burn_gpu import direct_plan, direct_program
from burn_gpu._conv_direct import MAX_ACC, MAX_LOCAL_BYTES, TILE_BYTES, dw_chunks


@pytest.mark.parametrize(
    "shape, itemsize, taken",
    [
        ((8, 1, 3, 3), 4, True),  # the guide's first conv
        ((16, 8, 3, 3), 4, True),  # ... and its second
        ((32, 16, 3, 3), 4, True),  # c_in * kh * kw = 144, the bound
        ((32, 16, 3, 3), 8, False),  # float64: 4,608 weights are 36 KiB
        ((32, 14, 3, 3), 8, True),  # 4,032 weights: 31.5 KiB
        ((33, 1, 3, 3), 4, False),  # 33 output channels
        ((8, 17, 3, 3), 4, False),  # 153 window elements
        ((16, 128, 1, 1), 4, True),  # a 1x1 conv: input channels in blocks of 32
        ((1, 1, 1, 1), 8, True),
    ],
)
def test_which_shapes_the_direct_kernels_take(shape, itemsize, taken):
    assert (direct_plan(*shape, itemsize, 1024) is not None) == taken


def test_every_plan_fits_its_kernels():
    for co, ci, kh, kw, itemsize, group in itertools.product(
        (1, 2, 3, 5, 8, 16, 31, 32), (1, 2, 3, 8, 16), (1, 2, 3), (1, 3, 5), (4, 8), (64, 1024)
    ):
        plan = direct_plan(co, ci, kh, kw, itemsize, group)
        ck = ci * kh * kw
        if plan is None:
            assert co * ck * itemsize > MAX_LOCAL_BYTES or ck > 144 or group < 256, plan
            continue
        assert plan.wg <= group and plan.px * co <= MAX_ACC and plan.pxb * plan.cib <= MAX_ACC
        assert plan.ncb * plan.cib >= ci and plan.cib <= 32
        assert co * ck * itemsize <= MAX_LOCAL_BYTES
        assert plan.mb * plan.tm >= co and plan.nb * plan.tn >= ck
        assert plan.mb * plan.nb * plan.ps <= plan.wg and plan.ps <= plan.pt <= plan.wg
        assert plan.wg % plan.pt == 0
        assert (plan.mb * plan.tm + plan.nb * plan.tn) * (plan.pt + 1) * itemsize <= TILE_BYTES
        red = (plan.ps // 2) * plan.mb * plan.nb * plan.tm * plan.tn * itemsize
        assert red <= TILE_BYTES
        for pixels in (1, plan.pt - 1, plan.pt * 3 + 1, 1024 * 576):
            chunks, per = dw_chunks(plan, pixels)
            assert per % plan.pt == 0 and (chunks - 1) * per < pixels <= chunks * per
            assert chunks * co * ck <= 1 << 22 or chunks == 1


def test_both_dialects_render_the_three_kernels():
    plan = direct_plan(16, 8, 3, 3, 4, 1024)
    for dialect in ("opencl", "cuda"):
        src = direct_program("float32", plan, dialect)
        for name in ("dconv_fwd", "dconv_dx", "dconv_dw"):
            assert f"void {name}(" in src
        assert "@" not in src  # every dialect token filled
