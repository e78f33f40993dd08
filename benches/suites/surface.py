"""Issue 38's new ops on the backend under test: grid_sample_2d (forward; forward + backward on
an autodiff device), ctc_loss (forward), and a Transaction of 8 reads against 8 separate reads.

These ops are default decompositions (every backend runs them; none has a kernel of its own
yet), so the suite shows what the decomposition costs against torch's fused kernels; the
transaction case shows the one-transfer read of OpenCl/Cuda (on NdArray both are copies).
"""

from __future__ import annotations

import numpy as np
from burn_tensor import GridSampleOptions, Tensor, Transaction, module
from burn_tensor import activation as A

from .._harness import Case, Suite
from ._common import gpu_sizes, inputs, rand


def build(ctx: dict, quick: bool) -> list[Case]:
    torch = ctx.get("torch")
    dev = ctx["device"]
    n, c, hw = (2, 3, 8) if quick else ((8, 16, 64) if not gpu_sizes(ctx) else (32, 32, 128))
    (x, _, tx), (g, _, tg) = inputs(
        ctx, rand((n, c, hw, hw), 1), rand((n, hw, hw, 2), 2, -1.2, 1.2)
    )
    cases = []
    for mode in ("bilinear", "nearest"):
        opts = GridSampleOptions(mode, "zeros", False)
        ft = None
        if torch is not None:
            gs = torch.nn.functional.grid_sample
            ft = lambda m=mode: gs(tx, tg, mode=m, padding_mode="zeros", align_corners=False)
        cases.append(
            Case(
                f"grid_sample_2d {mode} {n}x{c}x{hw}x{hw}",
                {"shape": [n, c, hw, hw], "mode": mode},
                {"burn": lambda o=opts: x.grid_sample_2d(g, o), "torch": ft},
            )
        )
    t_len, batch, classes, lab = (6, 2, 4, 2) if quick else (50, 16, 20, 10)
    uniform = np.log(np.full((t_len, batch, classes), 1.0 / classes, np.float32))
    ((lp, _, tlp),) = inputs(ctx, uniform)
    targets = np.random.default_rng(3).integers(1, classes, (batch, lab))
    tgt = Tensor.from_ints(targets, dev)
    il = Tensor.from_ints(np.full(batch, t_len), dev)
    tl = Tensor.from_ints(np.full(batch, lab), dev)
    fc = None
    if torch is not None:
        ctc = torch.nn.functional.ctc_loss
        tt = torch.from_numpy(targets).to(tlp.device)
        til = torch.full((batch,), t_len, dtype=torch.long)
        ttl = torch.full((batch,), lab, dtype=torch.long)
        fc = lambda: ctc(tlp, tt, til, ttl, reduction="none")
    cases.append(
        Case(
            f"ctc_loss T{t_len} N{batch} C{classes} L{lab}",
            {"T": t_len, "N": batch, "C": classes, "L": lab},
            {"burn": lambda: module.ctc_loss(A.log_softmax(lp, 2), tgt, il, tl, 0), "torch": fc},
        )
    )
    reads = [Tensor.from_data(rand((256, 256), 10 + i), dev) for i in range(8)]

    def transaction():
        tr = Transaction()
        for r in reads:
            tr.register(r)
        return tr.execute()

    cases.append(
        Case(
            "read 8 x 256x256: Transaction",
            {"tensors": 8, "shape": [256, 256]},
            # "numpy" here: the 8 separate reads through burn (what the transaction replaces)
            {"burn": transaction, "numpy": lambda: [r.to_data() for r in reads]},
        )
    )
    return cases


SUITE = Suite("surface", "issue 38 ops: grid_sample_2d, ctc_loss, Transaction", build)
