"""Exercise 3 (Step 3, autodiff): the gradient of a squared error through a dot product.

`w = [0.5, -0.3, 0.8]` requires grad on `Autodiff<NdArray>`, `x = [1, 2, 3]` is data,
`y_hat = (w * x).sum()`, `loss = (y_hat - 2.5)^2`; print `d loss / d w` from `backward()` and the
manual formula `2 (y_hat - y) x_i`.
"""

from __future__ import annotations

from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_tensor import Tensor

W: list[float] = [0.5, -0.3, 0.8]
X: list[float] = [1.0, 2.0, 3.0]
Y: float = 2.5


def _fmt(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.4f}" for v in values) + "]"


def run(device=None) -> dict[str, object]:
    """Print and return y_hat, loss, the autodiff gradient of w and the manual one (lists)."""
    device = device if device is not None else Autodiff(NdArray()).device()  # Autodiff<NdArray>

    w = Tensor.from_floats(W, device).require_grad()
    x = Tensor.from_floats(X, device)  # data: no require_grad

    y_hat = (w.clone() * x.clone()).sum()  # dot product, shape [1]
    loss = (y_hat.clone() - Y).powf_scalar(2.0)  # squared error, shape [1]

    grads = loss.backward()
    w_grad = w.grad(grads)  # on the inner backend (NdArray), or None
    if w_grad is None:
        raise RuntimeError("w should have a gradient")

    # Manual check: d loss / d w_i = 2 (y_hat - y) x_i, with plain Python floats.
    y_hat_value = float(y_hat.into_scalar())
    manual = [2.0 * (y_hat_value - Y) * xi for xi in X]

    print(f"y_hat = {y_hat_value:.4f}")
    print(f"loss = {float(loss.into_scalar()):.4f}")
    # Burn's `println!("dx = {}", x_grad.to_data())`: TensorData prints its flat f32 values.
    print(f"w = {w.to_data()}")
    print(f"dw = {w_grad.to_data()}")
    print(f"manual 2 * (y_hat - y) * x = {_fmt(manual)}")
    return {
        "y_hat": y_hat_value,
        "loss": float(loss.into_scalar()),
        "grad": w_grad.tolist(),
        "manual": manual,
    }


if __name__ == "__main__":
    run()
