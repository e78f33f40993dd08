"""Recurrent layers: `GateController`, `Lstm`, `BiLstm`, `Gru` (Burn's `nn::lstm`, `nn::gru`).

Gate activations are Burn's defaults (sigmoid gates, tanh cell/hidden); `clip` clamps the cell
state (LSTM) or hidden state (GRU) to [-clip, clip].
"""

from __future__ import annotations

from dataclasses import dataclass

from burn_tensor import Tensor
from burn_tensor import activation as A

from ._config import config
from ._initializer import Initializer, XavierNormal
from ._linear import Linear, LinearConfig
from ._module import Module
from ._util import check_initializer, check_sizes


class GateController(Module):
    """`input_transform(x) + hidden_transform(h)`: one gate of an LSTM/GRU.

    Shapes: input `[batch, d_input]`, hidden `[batch, d_output]` -> `[batch, d_output]`.
    """

    input_transform: Linear
    hidden_transform: Linear

    @classmethod
    def new(cls, d_input: int, d_output: int, bias: bool, initializer: Initializer, device=None):
        return cls(
            input_transform=LinearConfig(
                d_input, d_output, bias=bias, initializer=initializer
            ).init(device),
            hidden_transform=LinearConfig(
                d_output, d_output, bias=bias, initializer=initializer
            ).init(device),
        )

    def gate_product(self, input: Tensor, hidden: Tensor) -> Tensor:
        return self.input_transform.forward(input).add(self.hidden_transform.forward(hidden))


@dataclass
class LstmState:
    """`cell` and `hidden`, each `[batch, d_hidden]` (`[2, batch, d_hidden]` for BiLstm)."""

    cell: Tensor
    hidden: Tensor


def _seq(x: Tensor, batch_first: bool) -> Tensor:
    return x if batch_first else x.swap_dims(0, 1)


@config
class LstmConfig:
    """Config of `Lstm`."""

    d_input: int
    d_hidden: int
    bias: bool
    initializer: Initializer = XavierNormal(1.0)
    batch_first: bool = True
    reverse: bool = False
    clip: float | None = None
    input_forget: bool = False

    def init(self, device=None) -> Lstm:
        check_sizes("LstmConfig", d_input=self.d_input, d_hidden=self.d_hidden)
        check_initializer("LstmConfig", self.initializer)

        def gate():
            return GateController.new(
                self.d_input, self.d_hidden, self.bias, self.initializer, device
            )

        return Lstm(
            input_gate=gate(),
            forget_gate=gate(),
            output_gate=gate(),
            cell_gate=gate(),
            d_hidden=self.d_hidden,
            batch_first=self.batch_first,
            reverse=self.reverse,
            clip=self.clip,
            input_forget=self.input_forget,
        )


class Lstm(Module):
    """Long short-term memory.

    Shapes: input `[batch, seq, d_input]` (`[seq, batch, d_input]` unless batch_first) ->
    `(output [batch, seq, d_hidden], LstmState)`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> out, state = LstmConfig(4, 8, True).init(d).forward(Tensor.ones([2, 5, 4], d))
        >>> out.dims(), state.hidden.dims()
        ([2, 5, 8], [2, 8])
    """

    input_gate: GateController
    forget_gate: GateController
    output_gate: GateController
    cell_gate: GateController
    d_hidden: int = 1
    batch_first: bool = True
    reverse: bool = False
    clip: float | None = None
    input_forget: bool = False

    def forward(self, x: Tensor, state: LstmState | None = None) -> tuple[Tensor, LstmState]:
        x = _seq(x, self.batch_first)
        batch, seq = x.dims()[0], x.dims()[1]
        if state is None:
            zeros = Tensor.zeros([batch, self.d_hidden], x.device, dtype=x.dtype)
            c, h = zeros, zeros
        else:
            c, h = state.cell, state.hidden
        outs: list[Tensor | None] = [None] * seq
        steps = range(seq - 1, -1, -1) if self.reverse else range(seq)
        for t in steps:
            xt = x.narrow(1, t, 1).squeeze_dim(1)
            i = A.sigmoid(self.input_gate.gate_product(xt, h))
            f = (
                i.neg().add_scalar(1.0)
                if self.input_forget
                else A.sigmoid(self.forget_gate.gate_product(xt, h))
            )
            o = A.sigmoid(self.output_gate.gate_product(xt, h))
            g = self.cell_gate.gate_product(xt, h).tanh()
            c = f.mul(c).add(i.mul(g))
            if self.clip is not None:
                c = c.clamp(-self.clip, self.clip)
            h = o.mul(c.tanh())
            outs[t] = h
        out = Tensor.stack(outs, 1)
        return _seq(out, self.batch_first), LstmState(c, h)


@config
class BiLstmConfig:
    """Config of `BiLstm`: a forward and a reverse `Lstm`, outputs concatenated."""

    d_input: int
    d_hidden: int
    bias: bool
    initializer: Initializer = XavierNormal(1.0)
    batch_first: bool = True
    clip: float | None = None
    input_forget: bool = False

    def init(self, device=None) -> BiLstm:
        check_sizes("BiLstmConfig", d_input=self.d_input, d_hidden=self.d_hidden)
        check_initializer("BiLstmConfig", self.initializer)
        base = dict(
            initializer=self.initializer,
            batch_first=True,
            clip=self.clip,
            input_forget=self.input_forget,
        )
        return BiLstm(
            forward_lstm=LstmConfig(self.d_input, self.d_hidden, self.bias, **base).init(device),
            reverse_lstm=LstmConfig(
                self.d_input, self.d_hidden, self.bias, reverse=True, **base
            ).init(device),
            d_hidden=self.d_hidden,
            batch_first=self.batch_first,
        )


class BiLstm(Module):
    """Bidirectional LSTM.

    Shapes: `[batch, seq, d_input]` -> `(output [batch, seq, 2 * d_hidden], LstmState with
    [2, batch, d_hidden])`.
    """

    forward_lstm: Lstm
    reverse_lstm: Lstm
    d_hidden: int = 1
    batch_first: bool = True

    def forward(self, x: Tensor, state: LstmState | None = None) -> tuple[Tensor, LstmState]:
        x = _seq(x, self.batch_first)
        fs = rs = None
        if state is not None:
            fs = LstmState(
                state.cell.narrow(0, 0, 1).squeeze_dim(0),
                state.hidden.narrow(0, 0, 1).squeeze_dim(0),
            )
            rs = LstmState(
                state.cell.narrow(0, 1, 1).squeeze_dim(0),
                state.hidden.narrow(0, 1, 1).squeeze_dim(0),
            )
        fo, fst = self.forward_lstm.forward(x, fs)
        ro, rst = self.reverse_lstm.forward(x, rs)
        out = Tensor.cat([fo, ro], 2)
        st = LstmState(
            Tensor.stack([fst.cell, rst.cell], 0), Tensor.stack([fst.hidden, rst.hidden], 0)
        )
        return _seq(out, self.batch_first), st


@config
class GruConfig:
    """Config of `Gru`."""

    d_input: int
    d_hidden: int
    bias: bool
    reset_after: bool = True
    initializer: Initializer = XavierNormal(1.0)
    clip: float | None = None
    batch_first: bool = True

    def init(self, device=None) -> Gru:
        check_sizes("GruConfig", d_input=self.d_input, d_hidden=self.d_hidden)
        check_initializer("GruConfig", self.initializer)

        def gate():
            return GateController.new(
                self.d_input, self.d_hidden, self.bias, self.initializer, device
            )

        return Gru(
            update_gate=gate(),
            reset_gate=gate(),
            new_gate=gate(),
            d_hidden=self.d_hidden,
            reset_after=self.reset_after,
            clip=self.clip,
            batch_first=self.batch_first,
        )


class Gru(Module):
    """Gated recurrent unit: `h' = z * h + (1 - z) * n`, with
    `n = tanh(W_in x + b_in + r * (W_hn h + b_hn))` (reset_after) or `tanh(W_in x + W_hn (r * h) + b)`.

    Shapes: `[batch, seq, d_input]` -> `[batch, seq, d_hidden]`; optional state `[batch, d_hidden]`.
    """

    update_gate: GateController
    reset_gate: GateController
    new_gate: GateController
    d_hidden: int = 1
    reset_after: bool = True
    clip: float | None = None
    batch_first: bool = True

    def forward(self, x: Tensor, state: Tensor | None = None) -> Tensor:
        x = _seq(x, self.batch_first)
        batch, seq = x.dims()[0], x.dims()[1]
        h = (
            state
            if state is not None
            else Tensor.zeros([batch, self.d_hidden], x.device, dtype=x.dtype)
        )
        outs = []
        ng = self.new_gate
        for t in range(seq):
            xt = x.narrow(1, t, 1).squeeze_dim(1)
            z = A.sigmoid(self.update_gate.gate_product(xt, h))
            r = A.sigmoid(self.reset_gate.gate_product(xt, h))
            if self.reset_after:
                n = ng.input_transform.forward(xt).add(r.mul(ng.hidden_transform.forward(h))).tanh()
            else:
                n = ng.gate_product(xt, r.mul(h)).tanh()
            h = z.mul(h).add(z.neg().add_scalar(1.0).mul(n))
            if self.clip is not None:
                h = h.clamp(-self.clip, self.clip)
            outs.append(h)
        return _seq(Tensor.stack(outs, 1), self.batch_first)
