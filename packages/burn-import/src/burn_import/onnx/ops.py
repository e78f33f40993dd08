"""`burn_import.onnx.ops`: the run-time helpers that generated models call as `ops.<name>`.

Each helper is ONNX semantics written with the public Tensor API (so it runs on any backend and
is differentiable under Autodiff) for ops that are more than one Tensor method. A few index
computations (NonZero, Unique, NonMaxSuppression, GatherND/ScatterND index arithmetic) are done on the host with numpy.
"""

from ._rt_act import *
from ._rt_attention import attention, rotary_embedding  # noqa: F401
from ._rt_basic import *
from ._rt_conv3d import conv3d  # noqa: F401
from ._rt_grid import affine_grid, det, dft, grid_sample, stft  # noqa: F401
from ._rt_index import *
from ._rt_nms import non_max_suppression  # noqa: F401
from ._rt_nn import *
from ._rt_pool import col2im, pool_nd  # noqa: F401
from ._rt_qconv import qdq_conv  # noqa: F401
from ._rt_qlinear import qlinear_conv, qlinear_matmul  # noqa: F401
from ._rt_qmatmul import dequantize_weight, int_matmul, qdq_matmul  # noqa: F401
from ._rt_resize import resize  # noqa: F401
from ._rt_rnn import einsum, rnn  # noqa: F401
from ._rt_rnn_layers import gru, lstm  # noqa: F401
from ._rt_roi_align import roi_align  # noqa: F401
from ._rt_scan import loop_counter, loop_limits, scan_slice, scan_stack, truth  # noqa: F401
from ._rt_scatter import scatter_rows, tensor_scatter  # noqa: F401
from ._rt_tfidf import tfidf  # noqa: F401
from ._rt_unique import unique  # noqa: F401
