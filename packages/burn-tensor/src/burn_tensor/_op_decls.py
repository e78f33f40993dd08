"""The declarations: every op of the backend contract, one record each (`_op_decl.OpDecl`).

Each row declares ops that share their fields:
`op(names, signature or DEFAULT, shape rule, autodiff class[, fusion class[, EXPR]])`.
- `DEFAULT`: the op has a default decomposition in a family mixin (`_ops_float.py`,
  `_ops_numeric.py`, ...), bound to the record when the contract is built; else the op is
  required and the string is its signature.
- Shape rules: `SAME`, `BROADCAST`, `KEEP_DIM` (a `dim` argument kept with size 1), `SCALAR`
  (shape `(1,)`), `NONE` (not a tensor), `CUSTOM` (the op computes it).
- Autodiff classes: `RULE` (a row of burn-autodiff's `RULES`), `PASS`, `DECOMPOSE`, `SPECIAL`.
- Fusion classes: `ELEMENTWISE` (recorded lazily; needs `EXPR`), `REDUCTION`, or none.
- `EXPR`: burn-gpu's expression table (`burn_gpu.OPS`) has a C expression under the op's name.

Adding an op: add its row here, its default (if any) to the family mixin, its kernels, its
gradient rule (if RULE) and its tests; CONTRIBUTING.md's "Add an op" walks one op through.
`packages/burn-tensor/tests/test_op_decls.py` and each decorator's agreement test fail while a
table disagrees with these rows.
"""

from __future__ import annotations

from ._op_decl import (
    BROADCAST,
    CUSTOM,
    DECOMPOSE,
    DEFAULT,
    ELEMENTWISE,
    EXPR,
    KEEP_DIM,
    NONE,
    PASS,
    REDUCTION,
    RULE,
    SAME,
    SCALAR,
    SPECIAL,
    op,
)

# fmt: off
# -- float -----------------------------------------------------------------------------------------
op('float_equal', '(x, y) -> BoolP', BROADCAST, PASS, ELEMENTWISE, EXPR)
op(
    'float_greater float_greater_equal float_lower float_lower_equal',
    '(x, y_or_scalar) -> BoolP', BROADCAST, PASS, ELEMENTWISE, EXPR,
)
op('float_empty', '(shape, device, dtype) -> P', CUSTOM, PASS)
op(
    'float_from_data',
    '(data: TensorData, device) -> P  # data already has the target dtype', CUSTOM, PASS,
)
op('float_random', '(shape, distribution, device, dtype) -> P', CUSTOM, PASS)
op('float_argmax float_argmin', '(x, dim) -> IntP  # keeps dim; first occurrence', KEEP_DIM, PASS)
op('float_into_data', '(x) -> TensorData', NONE, PASS)
op(
    'float_equal_elem float_greater_elem float_greater_equal_elem float_lower_elem '
    'float_lower_equal_elem',
    '(x, y_or_scalar) -> BoolP', SAME, PASS, ELEMENTWISE, EXPR,
)
op('float_into_int', '(x, dtype) -> IntP  # truncates toward zero', SAME, PASS, ELEMENTWISE, EXPR)
op(
    'float_add float_div float_mul float_remainder float_sub',
    "(x, y) -> P  # remainder has the divisor's sign", BROADCAST, RULE, ELEMENTWISE, EXPR,
)
op('float_atan2 float_powf', '(x, y) -> P', BROADCAST, RULE, ELEMENTWISE, EXPR)
op('float_mask_fill', '(x, mask, scalar) -> P', BROADCAST, RULE, ELEMENTWISE, EXPR)
op('float_mask_where', '(x, mask, value) -> P', BROADCAST, RULE, ELEMENTWISE, EXPR)
op('float_cat', '(tensors: list, dim) -> P', CUSTOM, RULE)
op('float_expand', '(x, shape) -> P  # broadcast size-1 dims / add leading dims', CUSTOM, RULE)
op('float_gather', '(dim, x, indices) -> P', CUSTOM, RULE)
op('float_matmul', '(x, y) -> P  # rank >= 2, batch dims broadcast', CUSTOM, RULE)
op('float_permute', '(x, axes) -> P', CUSTOM, RULE)
op('float_reshape', '(x, shape) -> P', CUSTOM, RULE)
op('float_scatter', '(dim, x, indices, values) -> P  # adds', CUSTOM, RULE)
op('float_select', '(x, dim, indices) -> P', CUSTOM, RULE)
op('float_select_assign', '(x, dim, indices, values) -> P  # adds', CUSTOM, RULE)
op('float_slice', '(x, slices) -> P', CUSTOM, RULE)
op('float_slice_assign', '(x, slices, value) -> P', CUSTOM, RULE)
op('float_swap_dims', '(x, dim1, dim2) -> P', CUSTOM, RULE)
op('float_mean_dim float_sum_dim', '(x, dim) -> P  # keeps dim', KEEP_DIM, RULE, REDUCTION)
op('float_prod_dim', '(x, dim) -> P  # keeps dim', KEEP_DIM, RULE)
op('float_abs', '(x) -> P', SAME, RULE, ELEMENTWISE, EXPR)
op(
    'float_acos float_acosh float_asin float_asinh float_atan float_atanh float_ceil '
    'float_cos float_cosh float_erf float_exp float_floor float_log float_log1p float_recip '
    'float_sin float_sinh float_sqrt float_tan float_tanh float_trunc',
    '(x) -> P', SAME, RULE, ELEMENTWISE, EXPR,
)
op('float_round', '(x) -> P  # half to even, as Burn', SAME, RULE, ELEMENTWISE, EXPR)
op(
    'float_add_scalar float_div_scalar float_mul_scalar float_remainder_scalar '
    'float_sub_scalar',
    '(x, scalar) -> P', SAME, RULE, ELEMENTWISE, EXPR,
)
op('float_cast', '(x, dtype) -> P  # same kind, other dtype', SAME, RULE, ELEMENTWISE, EXPR)
op('float_cummax float_cummin float_cumprod float_cumsum', '(x, dim) -> P', SAME, RULE)
op('float_flip', '(x, axes) -> P', SAME, RULE)
op('float_powf_scalar', '(x, scalar: float) -> P', SAME, RULE, ELEMENTWISE, EXPR)
op('float_to_device', '(x, device) -> P', SAME, RULE)
op('float_prod', '(x) -> P of shape (1,)', SCALAR, RULE)
op('float_sum', '(x) -> P of shape (1,)', SCALAR, RULE, REDUCTION)
op(
    'float_adam_update float_adam_update_many float_topk_with_indices float_transpose '
    'float_unfold',
    DEFAULT, CUSTOM, DECOMPOSE,
)
op('float_max_abs_dim', DEFAULT, KEEP_DIM, DECOMPOSE)
op('float_powi float_powi_scalar float_sort', DEFAULT, SAME, DECOMPOSE)
op('float_square', DEFAULT, SAME, DECOMPOSE, ELEMENTWISE, EXPR)
op('float_max float_max_abs float_min', DEFAULT, SCALAR, DECOMPOSE)
op('float_not_equal', DEFAULT, BROADCAST, PASS, ELEMENTWISE, EXPR)
op('float_full float_ones float_zeros', DEFAULT, CUSTOM, PASS)
op('float_all_dim float_any_dim', DEFAULT, KEEP_DIM, PASS)
op('float_argsort', DEFAULT, SAME, PASS)
op('float_is_inf float_is_nan float_not_equal_elem', DEFAULT, SAME, PASS, ELEMENTWISE, EXPR)
op('float_all float_any', DEFAULT, SCALAR, PASS)
op('float_hypot', DEFAULT, BROADCAST, RULE, ELEMENTWISE, EXPR)
op('float_cross', DEFAULT, BROADCAST, DECOMPOSE)  # (x, y, dim): 3-vectors along dim
op(
    'float_max_dim_with_indices float_min_dim_with_indices float_repeat_dim '
    'float_sort_with_indices',
    DEFAULT, CUSTOM, RULE,
)
op('float_max_dim float_min_dim', DEFAULT, KEEP_DIM, RULE, REDUCTION)
op(
    'float_clamp float_clamp_max float_clamp_min float_neg float_sign',
    DEFAULT, SAME, RULE, ELEMENTWISE, EXPR,
)
op('float_mean', DEFAULT, SCALAR, RULE, REDUCTION)
op('float_is_require_grad', DEFAULT, NONE, SPECIAL)
op('float_detach float_set_require_grad', DEFAULT, SAME, SPECIAL)
# -- int (and bitwise) -----------------------------------------------------------------------------
op(
    'bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor',
    '(x, y) -> IntP', BROADCAST, PASS, None, EXPR,
)
op(
    'int_add int_mul int_sub',
    "(x, y) -> P  # int div truncates toward zero; remainder has the divisor's sign",
    BROADCAST,
    PASS,
    ELEMENTWISE,
    EXPR,
)
op(
    'int_div int_remainder',
    "(x, y) -> P  # int div truncates toward zero; remainder has the divisor's sign",
    BROADCAST,
    PASS,
    None,
    EXPR,
)
op('int_equal', '(x, y) -> BoolP', BROADCAST, PASS, ELEMENTWISE, EXPR)
op(
    'int_greater int_greater_equal int_lower int_lower_equal',
    '(x, y_or_scalar) -> BoolP', BROADCAST, PASS, ELEMENTWISE, EXPR,
)
op('int_mask_fill', '(x, mask, scalar) -> P', BROADCAST, PASS, ELEMENTWISE, EXPR)
op('int_mask_where', '(x, mask, value) -> P', BROADCAST, PASS, ELEMENTWISE, EXPR)
op('int_arange_step', '(start, end, step, device, dtype) -> IntP  # 1-D', CUSTOM, PASS)
op('int_cat', '(tensors: list, dim) -> P', CUSTOM, PASS)
op('int_empty', '(shape, device, dtype) -> P', CUSTOM, PASS)
op('int_expand', '(x, shape) -> P  # broadcast size-1 dims / add leading dims', CUSTOM, PASS)
op(
    'int_from_data',
    '(data: TensorData, device) -> P  # data already has the target dtype', CUSTOM, PASS,
)
op('int_gather', '(dim, x, indices) -> P', CUSTOM, PASS)
op('int_matmul', '(x, y) -> P  # rank >= 2, batch dims broadcast', CUSTOM, PASS)
op('int_permute', '(x, axes) -> P', CUSTOM, PASS)
op('int_random', '(shape, distribution, device, dtype) -> P', CUSTOM, PASS)
op('int_reshape', '(x, shape) -> P', CUSTOM, PASS)
op('int_scatter', '(dim, x, indices, values) -> P  # adds', CUSTOM, PASS)
op('int_select', '(x, dim, indices) -> P', CUSTOM, PASS)
op('int_select_assign', '(x, dim, indices, values) -> P  # adds', CUSTOM, PASS)
op('int_slice', '(x, slices) -> P', CUSTOM, PASS)
op('int_slice_assign', '(x, slices, value) -> P', CUSTOM, PASS)
op('int_swap_dims', '(x, dim1, dim2) -> P', CUSTOM, PASS)
op('int_argmax int_argmin', '(x, dim) -> IntP  # keeps dim; first occurrence', KEEP_DIM, PASS)
op('int_mean_dim int_prod_dim int_sum_dim', '(x, dim) -> P  # keeps dim', KEEP_DIM, PASS)
op('int_into_data', '(x) -> TensorData', NONE, PASS)
op(
    'bitwise_and_scalar bitwise_left_shift_scalar bitwise_or_scalar '
    'bitwise_right_shift_scalar bitwise_xor_scalar',
    '(x, scalar) -> IntP', SAME, PASS, None, EXPR,
)
op('bitwise_not', '(x) -> IntP', SAME, PASS, None, EXPR)
op('int_abs', '(x) -> P', SAME, PASS, ELEMENTWISE, EXPR)
op(
    'int_add_scalar int_mul_scalar int_sub_scalar',
    '(x, scalar) -> P', SAME, PASS, ELEMENTWISE, EXPR,
)
op('int_cast', '(x, dtype) -> P  # same kind, other dtype', SAME, PASS, ELEMENTWISE, EXPR)
op('int_cummax int_cummin int_cumprod int_cumsum', '(x, dim) -> P', SAME, PASS)
op('int_div_scalar int_remainder_scalar', '(x, scalar) -> P', SAME, PASS, None, EXPR)
op(
    'int_equal_elem int_greater_elem int_greater_equal_elem int_lower_elem '
    'int_lower_equal_elem',
    '(x, y_or_scalar) -> BoolP', SAME, PASS, ELEMENTWISE, EXPR,
)
op('int_flip', '(x, axes) -> P', SAME, PASS)
op('int_into_float', '(x, dtype) -> FloatP', SAME, PASS, ELEMENTWISE, EXPR)
op('int_to_device', '(x, device) -> P', SAME, PASS)
op('int_prod int_sum', '(x) -> P of shape (1,)', SCALAR, PASS)
op('int_not_equal', DEFAULT, BROADCAST, PASS, ELEMENTWISE, EXPR)
op('int_powi', DEFAULT, BROADCAST, PASS, None, EXPR)
op(
    'int_arange int_full int_max_dim_with_indices int_min_dim_with_indices int_ones '
    'int_repeat_dim int_sort_with_indices int_transpose int_unfold int_zeros',
    DEFAULT, CUSTOM, PASS,
)
op('int_all_dim int_any_dim int_max_abs_dim int_max_dim int_min_dim', DEFAULT, KEEP_DIM, PASS)
op('int_argsort int_sort', DEFAULT, SAME, PASS)
op(
    'int_clamp int_clamp_max int_clamp_min int_neg int_not_equal_elem int_sign',
    DEFAULT, SAME, PASS, ELEMENTWISE, EXPR,
)
op('int_powi_scalar', DEFAULT, SAME, PASS, None, EXPR)
op('int_all int_any int_max int_max_abs int_mean int_min', DEFAULT, SCALAR, PASS)
# -- bool ------------------------------------------------------------------------------------------
op('bool_and bool_equal bool_or', '(x, y) -> BoolP', BROADCAST, PASS, ELEMENTWISE, EXPR)
op('bool_mask_fill', '(x, mask, scalar) -> P', BROADCAST, PASS, ELEMENTWISE, EXPR)
op('bool_mask_where', '(x, mask, value) -> P', BROADCAST, PASS, ELEMENTWISE, EXPR)
op('bool_cat', '(tensors: list, dim) -> P', CUSTOM, PASS)
op('bool_empty', '(shape, device, dtype) -> P', CUSTOM, PASS)
op('bool_expand', '(x, shape) -> P  # broadcast size-1 dims / add leading dims', CUSTOM, PASS)
op(
    'bool_from_data',
    '(data: TensorData, device) -> P  # data already has the target dtype', CUSTOM, PASS,
)
op('bool_gather', '(dim, x, indices) -> P', CUSTOM, PASS)
op('bool_permute', '(x, axes) -> P', CUSTOM, PASS)
op('bool_reshape', '(x, shape) -> P', CUSTOM, PASS)
op('bool_select', '(x, dim, indices) -> P', CUSTOM, PASS)
op('bool_slice', '(x, slices) -> P', CUSTOM, PASS)
op('bool_slice_assign', '(x, slices, value) -> P', CUSTOM, PASS)
op('bool_swap_dims', '(x, dim1, dim2) -> P', CUSTOM, PASS)
op('bool_into_data', '(x) -> TensorData', NONE, PASS)
op('bool_flip', '(x, axes) -> P', SAME, PASS)
op('bool_into_float', '(x, dtype) -> FloatP', SAME, PASS, ELEMENTWISE, EXPR)
op('bool_into_int', '(x, dtype) -> IntP', SAME, PASS, ELEMENTWISE, EXPR)
op('bool_not', '(x) -> BoolP', SAME, PASS, ELEMENTWISE, EXPR)
op('bool_to_device', '(x, device) -> P', SAME, PASS)
op('bool_not_equal bool_xor', DEFAULT, BROADCAST, PASS, ELEMENTWISE, EXPR)
op(
    'bool_argwhere bool_full bool_ones bool_repeat_dim bool_transpose bool_zeros',
    DEFAULT, CUSTOM, PASS,
)
op('bool_all_dim bool_any_dim', DEFAULT, KEEP_DIM, PASS)
op('bool_equal_elem bool_not_equal_elem', DEFAULT, SAME, PASS, ELEMENTWISE, EXPR)
op('bool_all bool_any', DEFAULT, SCALAR, PASS)
# -- module, activation, attention and norm ops (float) --------------------------------------------
op('adaptive_avg_pool2d_backward', '(x, grad) -> P', CUSTOM, PASS)
op(
    'avg_pool2d_backward',
    '(x, grad, kernel_size, stride, padding, count_include_pad) -> P', CUSTOM, PASS,
)
op('interpolate_backward', '(x, grad, output_size, options: InterpolateOptions) -> P', CUSTOM, PASS)
op(
    'max_pool2d_with_indices_backward',
    '(x, kernel_size, stride, padding, dilation, output_grad, indices) -> P', CUSTOM, PASS,
)
op('adaptive_avg_pool2d', '(x, output_size) -> P', CUSTOM, RULE)
op('avg_pool2d', '(x, kernel_size, stride, padding, count_include_pad) -> P', CUSTOM, RULE)
op(
    'conv2d',
    '(x [n, c_in, h, w], weight [c_out, c_in/groups, kh, kw], bias [c_out] | None, '
    'options: ConvOptions) -> P',
    CUSTOM,
    RULE,
)
op(
    'conv_transpose2d',
    '(x, weight [c_in, c_out/groups, kh, kw], bias | None, options: ConvTransposeOptions) -> P',
    CUSTOM,
    RULE,
)
op('interpolate', '(x, output_size, options: InterpolateOptions) -> P', CUSTOM, RULE)
op(
    'max_pool2d_with_indices',
    '(x, kernel_size, stride, padding, dilation) -> (P, IntP flat h*w index)'
    '  # ties: first in kernel (row-major) order; a NaN wins its window (PyTorch)',
    CUSTOM,
    RULE,
)
op(
    'adaptive_avg_pool1d avg_pool1d conv1d conv_transpose1d max_pool1d '
    'max_pool1d_with_indices max_pool2d unfold4d',
    DEFAULT, CUSTOM, DECOMPOSE,
)
op('hard_sigmoid leaky_relu prelu silu hard_swish', DEFAULT, SAME, DECOMPOSE)
op('gelu_backward relu_backward', DEFAULT, BROADCAST, PASS, ELEMENTWISE, EXPR)
op(
    'attention_backward conv2d_bias_backward conv2d_weight_backward conv2d_x_backward '
    'conv_transpose2d_bias_backward conv_transpose2d_weight_backward '
    'conv_transpose2d_x_backward embedding_backward layer_norm_backward '
    'linear_bias_backward linear_weight_backward linear_weight_bias_backward '
    'linear_half_backward linear_x_backward log_sigmoid_backward '
    'log_softmax_backward sigmoid_backward softmax_backward',
    DEFAULT, CUSTOM, PASS,
)
op('attention embedding layer_norm linear', DEFAULT, CUSTOM, RULE)
# autocast's linear as one op (not Burn's: it has no autocast): (out, x_half, weight_half); the
# node keeps only the half copies; Cuda reads them in one GEMM writing the wide output
op('linear_half', DEFAULT, CUSTOM, RULE)
# dropout as one op (not Burn's: its Dropout multiplies by a drawn mask): (out, the mask scaled by
# 1 / keep) from the device's bernoulli draw; Cuda runs it in one launch (burn_gpu's `dropout`)
op('dropout', DEFAULT, CUSTOM, RULE)
op('gelu relu sigmoid', DEFAULT, SAME, RULE, ELEMENTWISE, EXPR)
op('log_sigmoid log_softmax softmax', DEFAULT, SAME, RULE)
# -- issue 38's surface: linear algebra, grids, pad/take/one-hot, CTC, transactions ---------------
# Default decompositions (`_ops_linalg.py`, `_ops_grid.py`, `_ops_extra.py`, `_ops_ctc.py`): the
# float ones are differentiated through their parts; the int/bool ones and one_hot_fill (its
# indices are truncated to ints) have no gradient; tr_execute reads data.
op(
    'float_affine_grid_2d float_cosine_similarity float_cov float_diag float_grid_sample_2d '
    'float_lu_decomposition float_matvec float_meshgrid float_outer float_pad float_take '
    'float_trace float_vector_norm ctc_loss',
    DEFAULT, CUSTOM, DECOMPOSE,
)
# 3-D convs and pools, deformable conv (`_ops_module3d.py`, `_ops_deform.py`): defaults over the
# 2-D ops and gathers, differentiated through them; NdArray and the GPU backends run their own.
op(
    'adaptive_avg_pool3d avg_pool3d conv3d conv_transpose3d deform_conv2d max_pool3d '
    'max_pool3d_with_indices',
    DEFAULT, CUSTOM, DECOMPOSE,
)
op('float_vector_normalize', DEFAULT, SAME, DECOMPOSE)
op('float_one_hot_fill', DEFAULT, CUSTOM, PASS)
op(
    'int_cartesian_grid int_diag int_matvec int_meshgrid int_one_hot_fill int_outer int_pad '
    'int_take int_vector_norm',
    DEFAULT, CUSTOM, PASS,
)
op('bool_diag bool_meshgrid bool_take', DEFAULT, CUSTOM, PASS)
op('tr_execute', DEFAULT, NONE, PASS)  # (floats, ints, bools) -> three lists of TensorData
# -- flash attention (issue 36): the forward with its saved statistic, the backward from it; GPU
# backends run burn_gpu's kernels (`FlashAttentionOps`), the defaults keep no statistic
op('attention_with_lse', DEFAULT, CUSTOM, RULE)
op('attention_lse_backward', DEFAULT, CUSTOM, PASS)
# -- FFT along one dim (issue 38, item 8; later Burn's `signal::{rfft, irfft, cfft}`): complex
# operands and results are planes [2, *shape] (`_ops_signal.py`); dense-DFT defaults, NdArray and
# Cuda run numpy.fft / cupy.fft, OpenCl burn_gpu's kernels; linear gradient rules
op('rfft irfft cfft', DEFAULT, CUSTOM, RULE)
# -- a whole ONNX RNN/GRU/LSTM layer over its time steps (issue 37; `_ops_rnn.py`): NdArray runs
# a C loop over the steps, OpenCl and Cuda one burn_gpu kernel launch (`burn_gpu/_rnn.py`), others
# the default (one matmul of h with R^T per step)
op('rnn_sequence', DEFAULT, CUSTOM, DECOMPOSE)
# -- a conv2d with its activation (issue 37, `_ops_conv_act.py`): NdArray applies it in its conv
# kernels' output blocks; the default is conv2d then the activation op
op('conv2d_activation', DEFAULT, CUSTOM, DECOMPOSE)
# fmt: on
