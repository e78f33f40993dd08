"""Tests written for mutants of Fusion's stream that the suite let survive (tools/mutation)."""

from __future__ import annotations

import numpy as np
from _fusion_testlib import inner_backend
from burn_fusion import Fusion
from burn_tensor import Tensor


def test_a_chain_on_one_input_reads_one_buffer():
    # node references (r >= 0, r = 0 included) are not inputs: a kernel computing
    # ((x * 2) + 1).exp() takes x alone, not x plus a stray copy of the last input
    device = Fusion(inner_backend()).device()
    x = np.linspace(-1.0, 1.0, 64).astype(np.float32)
    out = ((Tensor.from_data(x, device) * 2.0) + 1.0).exp().numpy()
    prog = device.backend.stream(device.index).last_program
    assert len(prog.inputs) == 1 and len(prog.nodes) == 3
    np.testing.assert_allclose(out, np.exp(x.astype(np.float64) * 2 + 1), rtol=1e-6)
