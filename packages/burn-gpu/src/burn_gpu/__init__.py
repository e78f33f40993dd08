"""burn_gpu: the kernel layer of burn-py's GPU backends -- every GPU kernel written once, as a
template rendered into OpenCL C or CUDA C, and the runtime contract the backends implement.

- `OPS` / `KERNELS` (`_expr.py`): the one expression table of the elementwise ops;
- `frame(dialect)` / `fill(text, frame)` (`_dialect.py`): what differs between OpenCL C and
  CUDA C (and the filling of a kernel text's placeholders), including the
  half types (`HALF`: float16/bfloat16 storage, float32 compute; `storage_head`);
- `Program` / `render` and `Reduction` / `render_reduction`: the fused-kernel renderer Fusion
  uses (one node is an eager op);
- `eager_program(dtype, dialect)` (`_eager.py`): the eager elementwise kernels of one type;
- `reduce_program(dtype, index_dtype, rwg, dialect)` (`_reduce.py`): reductions, scans, sort;
- `col_program(dtype, rwg, dialect)`, `col_plan`, `use_cols` (`_colreduce.py`): column
  reductions (few outputs, a long reduced dim: tiles over the columns, chunks of the dim);
- `index_program(dtype, index_dtype, dialect)` (`_index.py`): gather/select, scatter adds;
- `conv_program(dtype, dialect)` (`_conv.py`): im2col, col2im, interpolation;
- `direct_program(dtype, plan, dialect)`, `direct_plan` (`_conv_direct.py`): direct conv2d
  kernels for few channels (forward, input gradient, weight-gradient partials);
  `conv2d_direct`, `conv2d_x_backward_direct`, `conv2d_weight_backward_direct`
  (`_ops_conv_direct.py`): the backends' conv2d passes on them (None: take im2col), and
  `GpuDirectConv`, the mixin that tries them first;
- `vol_program(dtype, index_dtype, dialect)` (`_vol.py`): vol2col, col2vol, the 3-D pools;
- `pool_program(dtype, index_dtype, dialect)` (`_pool.py`): pools and their gradients;
- `random_program(dtype, dialect)` (`_random.py`): Philox random, one set of semantics;
  `dropout_program(dtype, dialect)`: dropout in one pass on the same bernoulli draws;
- `softmax_program(dtype, dialect)` (`_softmax.py`): softmax / log_softmax and backwards;
- `fill_program(dtype, dialect, wide)` (`_fill.py`): `fill` and the in-place `bias_add`;
- `attention_program(dtype, head_dim, value_dim, dialect)` (`_attention.py`): flash attention
  forward and backward; `FlashAttentionOps` (`_attention_ops.py`): the backends' dispatch;
- `fft_program(dtype, dialect)` (`_fft.py`): radix-2 Stockham passes, a direct DFT, their
  load/store; `GpuSignalOps` (`_ops_fft.py`): `rfft`, `irfft`, `cfft` on them;
- `layer_norm_program(dtype, dialect)` (`_norm.py`): layer norm's forward, a group per row;
  `layer_norm_bwd_program(dtype, dialect)` / `layer_norm_bwd_chunks` (`_norm_bwd.py`): its
  backward, dx a group per row, dgamma/dbeta a deterministic two-pass column sum;
  `GpuNormOps` (`_ops_norm.py`): the backends' `layer_norm` / `layer_norm_backward` on them;
- `rnn_program(dtype, dialect)` (`_rnn.py`): `rnn_sequence`'s time loop, a group per
  (direction, batch row); `GpuRnnOps` (`_ops_rnn.py`): the backends' `rnn_sequence` on it;
- `adam_program(dtype, dialect)` / `adam_many_program(dtype, tensors)` (`_adam.py`): Adam;
- `Runtime` / `GpuBackend` (`_runtime.py`): what `burn_opencl` and `burn_cuda` implement;
- ops written once over `Runtime`: `GpuModuleOps`, `unfold`, `col2im` (`_ops_module.py`),
  `GpuSoftmaxOps` (`_ops_softmax.py`), `draw` and `dropout` (`_ops_random.py`), `gather` / `select`
  (`_ops_index.py`).

Example:
    >>> from burn_gpu import Node, Program, render
    >>> prog = Program((("float32", False),), 0, (Node("float_exp", (-1,), "float32", "float32"),),
    ...                ((0, -1, ()),))
    >>> src, name = render(prog, "cuda")
    >>> "exp(x0)" in src
    True
"""

from ._adam import adam_many_program, adam_program
from ._attention import ROWS as ATTENTION_ROWS
from ._attention import attention_groups, attention_program
from ._attention import backward_kernels as attention_backward_kernels
from ._attention import forward_kernel as attention_forward_kernel
from ._attention import launched_kernels as attention_kernels
from ._attention import scale2 as attention_scale2
from ._attention_bwd import split_dkv as attention_split_dkv
from ._attention_dropout import DROP_HELPERS as ATTENTION_DROP_HELPERS
from ._attention_dropout import drop_args as attention_drop_args
from ._attention_ops import FlashAttentionOps, mask_args
from ._attention_ops import view_args as attention_view_args
from ._conv import conv_program
from ._conv_direct import DirectPlan, direct_plan, direct_program
from ._ops_conv_direct import (
    GpuDirectConv,
    conv2d_direct,
    conv2d_weight_backward_direct,
    conv2d_x_backward_direct,
)
from ._dtype_name import DTYPE_NAMES, dtype_name
from ._dialect import CTYPES, DIALECTS, HALF, Frame, fill, frame, storage_head
from ._eager import cast_program, eager_ops, eager_program
from ._expr import FLOAT_FN, FUSED, KERNELS, OPS, Op, kind_of
from ._fft import KERNELS as FFT_KERNELS
from ._fft import fft_program
from ._fill import fill_program
from ._ops_fft import GpuSignalOps
from ._index import RANK, RANK_GROUP, index_layout, index_program, rank_groups
from ._layout import LAY_C, MAXD, collapse, index_code, pack
from ._ops_index import gather, gather_into, index_kernel, select
from ._ops_module import GpuModuleOps, col2im, out_size, unfold
from ._ops_random import MAX_ELEMENTS, draw, dropout
from ._ops_softmax import GpuSoftmaxOps
from ._norm import layer_norm_program
from ._norm_bwd import bwd_chunks as layer_norm_bwd_chunks
from ._norm_bwd import layer_norm_bwd_program
from ._ops_norm import GpuNormOps
from ._pool import GEO_FIELDS, geo_args, pool_program
from ._quant import GpuQuantOps, qlinear_program, qmm_program
from ._vol import VOL_FIELDS, vol_args, vol_program
from ._ops_volume import GpuVolumeOps
from ._random import KINDS, dropout_program, random_program
from ._reduce import reduce_program
from ._colreduce import COL_OPS, ColPlan, col_plan, col_program, use_cols
from ._ops_rnn import GpuRnnOps
from ._rnn import HMAX as RNN_HMAX
from ._rnn import rnn_program
from ._render import FUSABLE_DTYPES, REDUCE_OPS, Node, Program, render
from ._render_row import Reduction, render_reduction
from ._render_vec import WIDTHS
from ._runtime import Arg, GpuBackend, Runtime, ints, runtime_of
from ._softmax import COL_GROUP, SoftmaxOps, row_group, softmax_program, split_dim

__all__ = [
    "ATTENTION_DROP_HELPERS",
    "ATTENTION_ROWS",
    "GpuDirectConv",
    "fill",
    "GpuQuantOps",
    "qlinear_program",
    "qmm_program",
    "COL_GROUP",
    "CTYPES",
    "DIALECTS",
    "FLOAT_FN",
    "FUSABLE_DTYPES",
    "FFT_KERNELS",
    "FUSED",
    "HALF",
    "GEO_FIELDS",
    "KERNELS",
    "KINDS",
    "LAY_C",
    "MAXD",
    "MAX_ELEMENTS",
    "OPS",
    "RANK",
    "RANK_GROUP",
    "REDUCE_OPS",
    "WIDTHS",
    "Arg",
    "FlashAttentionOps",
    "Frame",
    "GpuBackend",
    "GpuModuleOps",
    "GpuVolumeOps",
    "VOL_FIELDS",
    "vol_args",
    "vol_program",
    "GpuSignalOps",
    "GpuSoftmaxOps",
    "GpuRnnOps",
    "RNN_HMAX",
    "rnn_program",
    "Node",
    "Op",
    "Program",
    "Reduction",
    "Runtime",
    "SoftmaxOps",
    "adam_many_program",
    "adam_program",
    "attention_backward_kernels",
    "attention_forward_kernel",
    "attention_groups",
    "attention_kernels",
    "attention_program",
    "attention_scale2",
    "attention_drop_args",
    "attention_split_dkv",
    "attention_view_args",
    "cast_program",
    "col2im",
    "collapse",
    "conv_program",
    "conv2d_direct",
    "conv2d_weight_backward_direct",
    "conv2d_x_backward_direct",
    "DirectPlan",
    "direct_plan",
    "direct_program",
    "draw",
    "dropout",
    "dropout_program",
    "DTYPE_NAMES",
    "dtype_name",
    "eager_ops",
    "eager_program",
    "fft_program",
    "fill_program",
    "frame",
    "gather",
    "gather_into",
    "geo_args",
    "index_code",
    "index_kernel",
    "index_layout",
    "index_program",
    "rank_groups",
    "ints",
    "kind_of",
    "out_size",
    "mask_args",
    "layer_norm_program",
    "layer_norm_bwd_chunks",
    "layer_norm_bwd_program",
    "GpuNormOps",
    "pack",
    "pool_program",
    "random_program",
    "reduce_program",
    "COL_OPS",
    "ColPlan",
    "col_plan",
    "col_program",
    "use_cols",
    "render",
    "render_reduction",
    "row_group",
    "runtime_of",
    "select",
    "softmax_program",
    "split_dim",
    "unfold",
    "storage_head",
]
