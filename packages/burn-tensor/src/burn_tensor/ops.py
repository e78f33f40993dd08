"""Burn's `burn::tensor::ops`: what a backend implementation needs besides `Backend`.

- Option records the module ops receive: `ConvOptions`, `ConvTransposeOptions`, `UnfoldOptions`,
  `InterpolateOptions` (and its `INTERPOLATE_MODES`).
- The contract: `DECLS` (name -> `OpDecl`, the one record of each op: kind, dtypes, signature,
  shape rule, default decomposition, autodiff class, fusion class, expression key; `op_decl(name)`
  looks one up), `op_table()` (every op name), `REQUIRED_OPS` (name -> signature of the ops with
  no default), `OP_CONVENTIONS` (what the Tensor layer guarantees before it calls an op), and
  `ContractError` / `UnknownOpError` (a table disagrees with the records; an unknown op name).
- `adam_update`: one Adam step of a parameter as one backend op (`float_adam_update`), which
  burn-optim calls so GPU backends can run the update as one kernel; `adam_update_many`: the
  same for a list of parameters (`float_adam_update_many`, one launch per model on CUDA).
- `tensor_parts(t)`: `(primitive, kind, device)` of a tensor in one call (a decorator's hot
  path reads them without touching Tensor internals).
- Attention dropout: `attention_keep_mask(seed_words, p, b, h, seq_q, seq_k)` (Bool numpy
  [b, h, seq_q, seq_k], the keep mask every implementation hashes), `attention_drop_threshold(p)`
  (the uint32 a hash must reach) and `draw_attention_seed(device)` (the [2] Int tensor of seed
  words `module.attention(dropout=p)` draws per call).
- `rfft_bin_counts(n, bins)`: how often each bin of a length-`n` real signal's half spectrum
  counts in its full spectrum (1 or 2): what the FFT ops' gradient rules scale by.
- Slice helpers: `numpy_slice` turns one of the `slices` that `*_slice`/`*_slice_assign` receive
  (Burn's semantics: a negative step walks `[start, stop)` backwards) into a numpy slice.

Example:
    >>> from burn_tensor.ops import ConvOptions, numpy_slice
    >>> ConvOptions(stride=(1, 1), padding=(1, 1), dilation=(1, 1)).groups
    1
    >>> numpy_slice(slice(0, 5, -1))  # 4, 3, 2, 1, 0
    slice(4, None, -1)
"""

from ._attention_dropout import draw_seed as draw_attention_seed
from ._attention_dropout import keep_mask as attention_keep_mask
from ._attention_dropout import threshold as attention_drop_threshold
from ._backend import op_table
from ._fused_optim import adam_update, adam_update_many
from ._op_decl import DECLS, ContractError, OpDecl, UnknownOpError
from ._op_decl import decl as op_decl
from ._ops_spec import REQUIRED as REQUIRED_OPS
from ._ops_spec import __doc__ as OP_CONVENTIONS
from ._options import (
    INTERPOLATE_MODES,
    ConvOptions,
    ConvTransposeOptions,
    InterpolateOptions,
    UnfoldOptions,
)
from ._options_grid import GridSampleOptions
from ._ops_signal import rfft_bin_counts
from ._pad_mode import PadMode
from ._slice import numpy_slice
from ._tensor_parts import tensor_parts

__all__ = [
    "attention_drop_threshold",
    "attention_keep_mask",
    "draw_attention_seed",
    "DECLS",
    "ContractError",
    "OpDecl",
    "UnknownOpError",
    "op_decl",
    "INTERPOLATE_MODES",
    "OP_CONVENTIONS",
    "PadMode",
    "REQUIRED_OPS",
    "ConvOptions",
    "ConvTransposeOptions",
    "GridSampleOptions",
    "InterpolateOptions",
    "UnfoldOptions",
    "adam_update",
    "adam_update_many",
    "numpy_slice",
    "op_table",
    "rfft_bin_counts",
    "tensor_parts",
]
