"""`PositionalEncoding` (sinusoidal) and `RotaryEncoding` (RoPE)."""

from __future__ import annotations

import numpy as np
from burn_tensor import Tensor

from ._config import config
from ._module import Module
from ._util import device_or_default


def generate_sinusoids(length: int, d_model: int, max_timescale: int, device=None) -> Tensor:
    """`[length, d_model]`: sin at even dims, cos at odd, `pos / max_timescale^(i / d_model)`."""
    if d_model % 2:
        raise ValueError(f"generate_sinusoids: d_model must be even, got {d_model}")
    pos = np.arange(length, dtype=np.float64)[:, None]
    i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]
    angle = pos / np.power(float(max_timescale), i / d_model)
    out = np.zeros((length, d_model))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return Tensor.from_data(out, device)


@config
class PositionalEncodingConfig:
    """Config of `PositionalEncoding` (required: `d_model`)."""

    max_sequence_size: int = 5000
    d_model: int
    max_timescale: int = 10000

    def init(self, device=None) -> PositionalEncoding:
        s = generate_sinusoids(
            self.max_sequence_size, self.d_model, self.max_timescale, device_or_default(device)
        ).unsqueeze(3)
        return PositionalEncoding(
            sinusoids=s, max_sequence_size=self.max_sequence_size, max_timescale=self.max_timescale
        )


class PositionalEncoding(Module):
    """Adds fixed sinusoids (a constant tensor field, not a parameter).

    Shapes: `[batch, seq, d_model]` -> same (`seq <= max_sequence_size`).
    """

    sinusoids: Tensor
    max_sequence_size: int = 5000
    max_timescale: int = 10000

    def forward(self, x: Tensor) -> Tensor:
        seq = x.dims()[1]
        if seq > self.max_sequence_size:
            raise ValueError(
                f"PositionalEncoding: sequence {seq} > max_sequence_size {self.max_sequence_size}"
            )
        return x.add(self.sinusoids.narrow(1, 0, seq).to_device(x.device))


@config
class RotaryEncodingConfig:
    """Config of `RotaryEncoding`."""

    max_sequence_length: int
    d_model: int
    theta: float = 10000.0

    def init(self, device=None) -> RotaryEncoding:
        if self.d_model % 2:
            raise ValueError(f"RotaryEncodingConfig: d_model must be even, got {self.d_model}")
        device = device_or_default(device)
        inv = 1.0 / np.power(
            self.theta, np.arange(0, self.d_model, 2, dtype=np.float64) / self.d_model
        )
        angle = np.arange(self.max_sequence_length, dtype=np.float64)[:, None] * inv[None, :]
        cos = np.repeat(np.cos(angle), 2, axis=1)
        sin = np.repeat(np.sin(angle), 2, axis=1)
        return RotaryEncoding(
            cos=Tensor.from_data(cos, device),
            sin=Tensor.from_data(sin, device),
            max_sequence_length=self.max_sequence_length,
            theta=self.theta,
        )


class RotaryEncoding(Module):
    """Rotates consecutive pairs `(x[2i], x[2i+1])` by `pos * theta^(-2i / d_model)`.

    Shapes: `[..., seq, d_model]` -> same.
    """

    cos: Tensor
    sin: Tensor
    max_sequence_length: int = 1
    theta: float = 10000.0

    def forward(self, x: Tensor) -> Tensor:
        return self.apply(x, 0)

    def apply(self, x: Tensor, start: int = 0) -> Tensor:
        dims = x.dims()
        seq, d = dims[-2], dims[-1]
        if start + seq > self.max_sequence_length:
            raise ValueError(
                f"RotaryEncoding: positions up to {start + seq} > {self.max_sequence_length}"
            )
        cos = self.cos.narrow(0, start, seq).unsqueeze(len(dims)).to_device(x.device)
        sin = self.sin.narrow(0, start, seq).unsqueeze(len(dims)).to_device(x.device)
        pairs = x.reshape(dims[:-1] + [d // 2, 2])
        even, odd = pairs.narrow(len(dims), 0, 1), pairs.narrow(len(dims), 1, 1)
        rotated = Tensor.cat([odd.neg(), even], len(dims)).reshape(dims)
        return x.mul(cos).add(rotated.mul(sin))
