import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import Module, Param
from burn_tensor import Tensor


@pytest.fixture
def ad64():
    """Autodiff over float64 NdArray: optimizer numerics are compared to numpy float64."""
    return Autodiff(NdArray(float_dtype="float64")).device()


@pytest.fixture
def ad32():
    return Autodiff(NdArray()).device()


class Affine(Module):
    """`x @ w + b`: a fixed regression problem whose gradient numpy can compute exactly."""

    w: Param
    b: Param

    def forward(self, x: Tensor) -> Tensor:
        return x.matmul(self.w.val()) + self.b.val().reshape([1, -1])


def make_problem(device, seed: int = 0, d_in: int = 4, d_out: int = 3, n: int = 8):
    rng = np.random.default_rng(seed)
    w0 = rng.normal(size=(d_in, d_out))
    b0 = rng.normal(size=(d_out,))
    x = rng.normal(size=(n, d_in))
    y = rng.normal(size=(n, d_out))
    model = Affine(
        w=Param.from_tensor(Tensor.from_data(w0, device)),
        b=Param.from_tensor(Tensor.from_data(b0, device)),
    )
    return model, w0, b0, x, y


def mse(model, x, y, device) -> Tensor:
    r = model.forward(Tensor.from_data(x, device)) - Tensor.from_data(y, device)
    return (r * r).mean()


def np_grads(w, b, x, y):
    """Gradients of mean((x w + b - y)^2) in float64."""
    r = x @ w + b - y
    scale = 2.0 / r.size
    return scale * x.T @ r, scale * r.sum(0)


@pytest.fixture
def problem():
    return make_problem, mse, np_grads
