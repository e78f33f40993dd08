"""Exercise 1 (Step 1, tensor basics): a 3x3 identity-like Float tensor built with `from_data`,
a 1-D Int tensor `[10, 20, 30]`, and the Bool tensor `identity > 0`; print all three.

Burn's `Tensor<B, D, K>` carries the backend, the rank and the kind as type parameters. In burn-py
they are runtime values: the backend is the device's (`NdArray().device()`), the rank is
`tensor.rank()`, the kind (`Float`, `Int`, `Bool`) follows the data (floats, ints, bools) and is
checked by every op. The printed `shape`/`backend`/`kind`/`dtype` lines show all three.
"""

from __future__ import annotations

from burn_ndarray import NdArray
from burn_tensor import Tensor, TensorData


def run(device=None) -> tuple[Tensor, Tensor, Tensor]:
    """Print and return `(identity [3, 3] Float, [10, 20, 30] Int, identity > 0 Bool)`."""
    device = device if device is not None else NdArray().device()  # Burn: `type B = NdArray;`

    # Float (the default kind): 1s on the diagonal, 0s elsewhere, written out with from_data.
    identity = Tensor.from_data([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], device)
    # Int: integer data gives an Int tensor (Burn: Tensor::<B, 1, Int>::from_data(...)).
    numbers = Tensor.from_data(TensorData([10, 20, 30]), device)
    # Bool: a comparison with a scalar.
    positive = identity.greater_elem(0.0)

    print(identity)
    print(numbers)
    print(positive)
    return identity, numbers, positive


if __name__ == "__main__":
    run()
