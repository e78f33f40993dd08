"""Exercise 7 (Step 7, losses): cross-entropy from `CrossEntropyLossConfig` and a hand-written
`manual_cross_entropy` (log-softmax, gather the target's log-probability, negative mean) on random
logits `[8, 5]` and random Int targets `[8]` in `0..5`; print both scalars.
"""

from __future__ import annotations

from burn_ndarray import NdArray
from burn_nn.loss import CrossEntropyLossConfig
from burn_tensor import Distribution, Int, Tensor, activation

BATCH, NUM_CLASSES = 8, 5


def manual_cross_entropy(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean negative log-likelihood of `targets` (`[batch]` Int) under `logits` (`[batch, C]`).

    The gather is `Tensor::select` on the flattened log-probabilities: row `i`'s target `t_i`
    sits at flat index `i * C + t_i`. Returns a `[1]` tensor.
    """
    batch, num_classes = logits.dims()
    log_probs = activation.log_softmax(logits, 1)  # [batch, C]
    flat = log_probs.reshape([batch * num_classes])  # [batch * C]
    rows = Tensor.arange(0, batch, logits.device)  # [batch] Int: 0, 1, ..., batch - 1
    indices = rows * num_classes + targets  # [batch] Int
    picked = flat.select(0, indices)  # [batch]: log p(target_i | x_i)
    return -picked.mean()


def run(device=None, seed: int = 7) -> dict[str, object]:
    """Print both losses and their difference; return them with the logits and targets (lists)."""
    device = device if device is not None else NdArray().device()
    device.seed(seed)

    logits = Tensor.random([BATCH, NUM_CLASSES], Distribution.Normal(0.0, 1.0), device)
    # Int, uniform in [0, 5): Burn's Tensor::<B, 1, Int>::random([8], Uniform(0.0, 5.0), &device)
    uniform = Distribution.Uniform(0.0, float(NUM_CLASSES))
    targets = Tensor.random([BATCH], uniform, device, kind=Int)

    loss_fn = CrossEntropyLossConfig().init(device)
    builtin = float(loss_fn.forward(logits, targets).into_scalar())
    manual = float(manual_cross_entropy(logits, targets).into_scalar())

    print(f"targets: {targets.tolist()}")
    print(f"CrossEntropyLoss:     {builtin:.6f}")
    print(f"manual_cross_entropy: {manual:.6f}")
    print(f"|difference|: {abs(builtin - manual):.2e}")
    return {
        "logits": logits.tolist(),
        "targets": targets.tolist(),
        "builtin": builtin,
        "manual": manual,
    }


if __name__ == "__main__":
    run()
