"""The captured cases of the transformer_precision suite replay (they are not the eager step
timed twice): on Fusion(OpenCl) (PoCL here) the fp32 and mixed-bf16 steps, recorded by
`burn_fusion.capture`, replay from their fifth call (two eager calls, two recordings that must agree), and their losses are the eager step's."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@pytest.mark.parametrize("mixed", [False, True], ids=["fp32", "bf16-mixed"])
def test_captured_transformer_step_replays_with_the_eager_losses(mixed):
    pytest.importorskip("pyopencl")
    from burn_autodiff import Autodiff
    from burn_tensor.backend import get_backend

    from benches.suites import transformer_precision as tp

    device = Autodiff(get_backend("fusion-opencl")).device()
    size = tp.SIZES["quick"]
    tokens, targets = tp._data(size)
    # each build reseeds the device (same weights, same dropout draws): run one, then the other
    eager = tp._burn_step(device, size, tokens, targets, mixed, capture=False)
    want = [float(eager().into_scalar()) for _ in range(6)]
    captured = tp._burn_step(device, size, tokens, targets, mixed, capture=True)
    got = [float(captured().into_scalar()) for _ in range(6)]
    stats = captured.captured.stats()
    assert stats["replays"] >= 2 and not stats["eager_reasons"], stats
    # dropout draws the same numbers either way (the device's counter is replayed), so the
    # recorded step computes the eager losses
    np.testing.assert_allclose(got, want, rtol=1e-5)
