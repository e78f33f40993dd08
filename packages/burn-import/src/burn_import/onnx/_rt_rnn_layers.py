"""ONNX LSTM and GRU layers whose weights live in burn_nn modules (`Lstm`, `BiLstm`, `Gru`).

The generated model holds the layer as a field, so its weights are saved in Burn's layout and
trainable like any hand-written `Lstm`; the steps still run as one backend op per layer
(`_rt_rnn.rnn`, i.e. `burn_tensor.module.rnn_sequence`), not as the module's Python loop.
"""

from __future__ import annotations

from collections import OrderedDict

from burn_nn import BiLstm
from burn_tensor import Tensor

from ._rt_rnn import rnn

LSTM_GATES = ("input_gate", "output_gate", "forget_gate", "cell_gate")  # ONNX's i, o, f, c
GRU_GATES = ("update_gate", "reset_gate", "new_gate")  # ONNX's z, r, h


# Packed weights of layers run without autodiff, keyed by the identities of their weights'
# primitives (the value holds those primitives, so an identity cannot be reused while cached):
# inference repacks nothing (transposing the weights took 0.25 ms of a 0.4 ms LSTM layer).
_PACKED: OrderedDict = OrderedDict()
_PACKED_MAX = 64


def _onnx_weights(cells, gates):
    """ONNX's W `[dirs, gates*H, in]`, R `[dirs, gates*H, H]` and B `[dirs, 2*gates*H]` (None
    without biases) from the gate controllers of `cells` (burn Linear weights are `[in, out]`);
    computed again on every call under autodiff, so gradients reach the fields."""
    vals = [
        None if p is None else p.val()
        for c in cells
        for g in gates
        for lin in (getattr(c, g).input_transform, getattr(c, g).hidden_transform)
        for p in (lin.weight, lin.bias)
    ]
    if any(v is not None and v.is_require_grad() for v in vals):
        return _pack(cells, gates)
    prims = tuple(None if v is None else v.into_primitive() for v in vals)
    key = tuple(map(id, prims))
    hit = _PACKED.get(key)
    if hit is not None:
        _PACKED.move_to_end(key)
        return hit[1]
    packed = _pack(cells, gates)
    _PACKED[key] = (prims, packed)
    if len(_PACKED) > _PACKED_MAX:
        _PACKED.popitem(last=False)
    return packed


def _pack(cells, gates):
    ws, rs, bs = [], [], []
    for cell in cells:
        gs = [getattr(cell, g) for g in gates]
        ws.append(Tensor.cat([g.input_transform.weight.val().transpose() for g in gs], 0))
        rs.append(Tensor.cat([g.hidden_transform.weight.val().transpose() for g in gs], 0))
        if gs[0].input_transform.bias is not None:
            ins = [g.input_transform.bias.val() for g in gs]
            bs.append(Tensor.cat(ins + [g.hidden_transform.bias.val() for g in gs], 0))
    b = Tensor.stack(bs, 0) if bs else None
    return _row_major(Tensor.stack(ws, 0)), _row_major(Tensor.stack(rs, 0)), b


def _row_major(t):
    """`t` laid out row-major: the joined transposes keep a column-major layout on NdArray,
    which its rnn kernel would copy on every call; flattening copies once, into rows."""
    dims = t.dims()
    return t.reshape([-1]).reshape(dims)


def lstm(x, layer, h0=None, c0=None, *, layout=0, seq_lens=None):
    """ONNX LSTM (Y, Y_h, Y_c) with `layer`'s weights: an `Lstm` (forward, or reverse when
    `layer.reverse`) or a `BiLstm` (bidirectional). Initial states default to zeros."""
    if isinstance(layer, BiLstm):
        cells, direction = [layer.forward_lstm, layer.reverse_lstm], "bidirectional"
    else:
        cells, direction = [layer], "reverse" if layer.reverse else "forward"
    w, r, b = _onnx_weights(cells, LSTM_GATES)
    return rnn(
        "LSTM", x, w, r, b, h0, c0, direction=direction, layout=layout,
        input_forget=int(cells[0].input_forget), seq_lens=seq_lens,
    )  # fmt: skip


def gru(x, layers, h0=None, *, reverse=False, layout=0, seq_lens=None):
    """ONNX GRU (Y, Y_h, None) with the weights of one `Gru` (forward, or `reverse`) or of
    two, (forward, reverse), for a bidirectional layer. Initial state defaults to zeros."""
    cells = list(layers) if isinstance(layers, (list, tuple)) else [layers]
    if len(cells) == 2:
        direction = "bidirectional"
    else:
        direction = "reverse" if reverse else "forward"
    w, r, b = _onnx_weights(cells, GRU_GATES)
    return rnn(
        "GRU", x, w, r, b, h0, direction=direction, layout=layout,
        linear_before_reset=int(cells[0].reset_after), seq_lens=seq_lens,
    )  # fmt: skip
