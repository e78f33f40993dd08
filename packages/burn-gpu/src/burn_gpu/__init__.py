"""burn_gpu: the kernel layer of burn-py's GPU backends -- every GPU kernel written once, as a
template rendered into OpenCL C or CUDA C, and the runtime contract the backends implement.

- `OPS` / `KERNELS` (`_expr.py`): the one expression table of the elementwise ops;
- `frame(dialect)` (`_dialect.py`): what differs between OpenCL C and CUDA C;
- `Program` / `render` and `Reduction` / `render_reduction`: the fused-kernel renderer Fusion
  uses (one node is an eager op);
- `eager_program(dtype, dialect)` (`_eager.py`): the eager elementwise kernels of one type;
- `reduce_program(dtype, index_dtype, rwg, dialect)` (`_reduce.py`): reductions, scans, sort;
- `index_program(dtype, index_dtype, dialect)` (`_index.py`): gather/select, scatter adds;
- `conv_program(dtype, dialect)` (`_conv.py`): im2col, col2im, interpolation;
- `pool_program(dtype, index_dtype, dialect)` (`_pool.py`): pools and their gradients;
- `random_program(dtype, dialect)` (`_random.py`): Philox random, one set of semantics;
- `softmax_program(dtype, dialect)` (`_softmax.py`): softmax / log_softmax and backwards;
- `adam_program(dtype, dialect)` / `adam_many_program(dtype, tensors)` (`_adam.py`): Adam;
- `Runtime` / `GpuBackend` (`_runtime.py`): what `burn_opencl` and `burn_cuda` implement.

Example:
    >>> from burn_gpu import Node, Program, render
    >>> prog = Program((("float32", False),), 0, (Node("float_exp", (-1,), "float32", "float32"),),
    ...                ((0, -1, ()),))
    >>> src, name = render(prog, "cuda")
    >>> "exp(x0)" in src
    True
"""

from ._adam import adam_many_program, adam_program
from ._conv import conv_program
from ._dialect import CTYPES, DIALECTS, Frame, frame
from ._eager import cast_program, eager_ops, eager_program
from ._expr import FLOAT_FN, FUSED, KERNELS, OPS, Op, kind_of
from ._index import RANK, index_layout, index_program
from ._layout import LAY_C, MAXD, collapse, index_code, pack
from ._pool import GEO_FIELDS, geo_args, pool_program
from ._quant import GpuQuantOps, qlinear_program, qmm_program
from ._random import KINDS, random_program
from ._reduce import reduce_program
from ._render import FUSABLE_DTYPES, REDUCE_OPS, Node, Program, render
from ._render_row import Reduction, render_reduction
from ._render_vec import WIDTHS
from ._runtime import GpuBackend, Runtime, runtime_of
from ._softmax import COL_GROUP, SoftmaxOps, row_group, softmax_program, split_dim

__all__ = [
    "GpuQuantOps",
    "qlinear_program",
    "qmm_program",
    "COL_GROUP",
    "CTYPES",
    "DIALECTS",
    "FLOAT_FN",
    "FUSABLE_DTYPES",
    "FUSED",
    "GEO_FIELDS",
    "KERNELS",
    "KINDS",
    "LAY_C",
    "MAXD",
    "OPS",
    "RANK",
    "REDUCE_OPS",
    "WIDTHS",
    "Frame",
    "GpuBackend",
    "Node",
    "Op",
    "Program",
    "Reduction",
    "Runtime",
    "SoftmaxOps",
    "adam_many_program",
    "adam_program",
    "cast_program",
    "collapse",
    "conv_program",
    "eager_ops",
    "eager_program",
    "frame",
    "geo_args",
    "index_code",
    "index_layout",
    "index_program",
    "kind_of",
    "pack",
    "pool_program",
    "random_program",
    "reduce_program",
    "render",
    "render_reduction",
    "row_group",
    "runtime_of",
    "softmax_program",
    "split_dim",
]
