"""Exercise 2 (Step 2, tensor operations): min-max normalization of a 1-D tensor, and softmax
along dimension 1 of a 2-D tensor from `exp`, `sum_dim` and division only.

Burn moves tensors into ops and needs `.clone()` to reuse one; burn-py tensors are immutable
Python values, so `t` is simply used several times (`clone()` exists and is free).
"""

from __future__ import annotations

from burn_ndarray import NdArray
from burn_tensor import Tensor, activation

NORMALIZE_INPUT: list[float] = [2.0, 4.0, 6.0, 8.0, 10.0]
SOFTMAX_INPUT: list[list[float]] = [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 1.0]]


def min_max_normalize(t: Tensor) -> Tensor:
    """`(t - min) / (max - min)` for a 1-D tensor; shapes `[n] -> [n]`.

    `min()`/`max()` are 1-element tensors of rank 1, so they broadcast against `[n]`.
    """
    lo = t.clone().min()  # clone() mirrors the Rust; a no-op for immutable burn-py tensors
    hi = t.clone().max()
    return (t - lo) / (hi - lo)


def softmax_dim1(x: Tensor) -> Tensor:
    """Softmax along dimension 1 of `[rows, cols]` from exp, sum_dim and division only.

    `sum_dim(1)` keeps the reduced dim (`[rows, 1]`), so the division broadcasts per row.
    """
    e = x.exp()
    return e / e.sum_dim(1)


def run(device=None) -> tuple[Tensor, Tensor, Tensor]:
    """Print and return `(normalized, softmax, activation.softmax for comparison)`."""
    device = device if device is not None else NdArray().device()

    t = Tensor.from_floats(NORMALIZE_INPUT, device)
    normalized = min_max_normalize(t)
    print("min_max_normalize([2, 4, 6, 8, 10]) (expected [0.0, 0.25, 0.5, 0.75, 1.0]):")
    print(normalized)

    x = Tensor.from_data(SOFTMAX_INPUT, device)
    soft = softmax_dim1(x)
    reference = activation.softmax(x, 1)
    print("softmax along dim 1 (exp / sum_dim):")
    print(soft)
    # Compare a few values: a uniform row gives 1/3 each, and every row sums to 1.
    sums = soft.sum_dim(1).flatten(0, 1).tolist()
    print("row sums: [" + ", ".join(f"{v:.4f}" for v in sums) + "]")
    print(f"max |manual - activation::softmax|: {(soft - reference).abs().max().into_scalar():.2e}")
    return normalized, soft, reference


if __name__ == "__main__":
    run()
