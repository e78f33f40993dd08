"""The generated task of Burn's modern-lstm example: Fibonacci-like sequences.

Each sequence starts with two numbers drawn uniformly from [0, 1); every next value is the sum
of the two before it plus Gaussian noise (sigma `noise`). The model reads the first
`seq_length` values and predicts the next one.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import Tensor

NUM_SEQUENCES = 1000  # Burn's
SEQ_LENGTH = 10
NOISE_LEVEL = 0.1
RANDOM_SEED = 5


def generate(num: int, seq_length: int = SEQ_LENGTH, noise: float = NOISE_LEVEL,
             seed: int = RANDOM_SEED) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`(sequences [num, seq_length], targets [num])`, float32, from one seeded generator."""
    if num < 1 or seq_length < 2:
        raise ValueError(f"generate: need num >= 1 and seq_length >= 2, got {num}, {seq_length}")
    rng = np.random.default_rng(seed)
    values = np.empty((num, seq_length + 1), dtype=np.float64)
    values[:, :2] = rng.uniform(0.0, 1.0, size=(num, 2))
    for t in range(2, seq_length + 1):
        values[:, t] = values[:, t - 1] + values[:, t - 2] + rng.normal(0.0, noise, size=num)
    return values[:, :seq_length].astype(np.float32), values[:, seq_length].astype(np.float32)


def batches(seqs: np.ndarray, targets: np.ndarray, batch_size: int, scale: float, device,
            rng: np.random.Generator | None = None):  # fmt: skip
    """Yield `(inputs [batch, seq, 1], targets [batch, 1])` divided by `scale` (the training
    set's largest target, so values the LSTM sees stay near [0, 1]); shuffled when `rng`."""
    order = rng.permutation(len(seqs)) if rng is not None else np.arange(len(seqs))
    for start in range(0, len(seqs), batch_size):
        idx = order[start : start + batch_size]
        x = (seqs[idx] / scale)[:, :, None].astype(np.float32)
        y = (targets[idx] / scale)[:, None].astype(np.float32)
        yield Tensor.from_data(x, device), Tensor.from_data(y, device)
