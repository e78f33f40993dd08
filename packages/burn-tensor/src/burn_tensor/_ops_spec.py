"""The required ops of the backend contract, with their signatures.

Conventions for every op (the Tensor layer guarantees them before calling a backend):
- `x`, `y`, `mask`, `indices` are primitives of the backend; dims are non-negative ints already
  validated; shapes are tuples of ints; `dtype` is a `DType`; scalars are Python numbers already
  converted to the tensor's kind.
- Binary ops receive equal-rank inputs whose dims are equal or 1 (numpy broadcasting within a rank).
- `*_dim` reductions keep the reduced dim (size 1); full reductions return shape `(1,)`.
- `slices` is a tuple of `slice(start, stop, step)` with concrete ints, one per dim, already clamped;
  a negative step walks the same `[start, stop)` range backwards (Burn's `s![a..b;-1]`).
- `gather(dim, x, indices)`: out[i][j] = x[i][indices[i][j]] along `dim` (torch.gather).
- `scatter(dim, x, indices, values)` ADDS values at indices (torch.scatter_add), as Burn.
- `select(x, dim, indices)` with 1-D int indices (torch.index_select);
  `select_assign(x, dim, indices, values)` ADDS values at the selected positions (torch.index_add), as Burn.
- `mask_where(x, mask, y)`: y where mask else x; `mask_fill(x, mask, scalar)`.
- Comparisons return bool primitives; `argmax`/`argmin`/`*_with_indices` return int primitives of the
  backend's int dtype.
- `sum`, `prod`, `max`, `min`, `mean` of a whole tensor return shape `(1,)`.
"""

from __future__ import annotations

# family -> list of (name, signature) for documentation and for the stubs below.
REQUIRED: dict[str, str] = {}


def _add(names: str, sig: str) -> None:
    for n in names.split():
        REQUIRED[n] = sig


for _k in ("float", "int", "bool"):
    _add(f"{_k}_from_data", "(data: TensorData, device) -> P  # data already has the target dtype")
    _add(f"{_k}_into_data", "(x) -> TensorData")
    _add(f"{_k}_empty", "(shape, device, dtype) -> P")
    _add(f"{_k}_to_device", "(x, device) -> P")
    _add(f"{_k}_reshape", "(x, shape) -> P")
    _add(f"{_k}_swap_dims", "(x, dim1, dim2) -> P")
    _add(f"{_k}_permute", "(x, axes) -> P")
    _add(f"{_k}_flip", "(x, axes) -> P")
    _add(f"{_k}_expand", "(x, shape) -> P  # broadcast size-1 dims / add leading dims")
    _add(f"{_k}_slice", "(x, slices) -> P")
    _add(f"{_k}_slice_assign", "(x, slices, value) -> P")
    _add(f"{_k}_gather", "(dim, x, indices) -> P")
    _add(f"{_k}_select", "(x, dim, indices) -> P")
    _add(f"{_k}_mask_where", "(x, mask, value) -> P")
    _add(f"{_k}_mask_fill", "(x, mask, scalar) -> P")
    _add(f"{_k}_equal", "(x, y) -> BoolP")
    _add(f"{_k}_cat", "(tensors: list, dim) -> P")

for _k in ("float", "int"):
    _add(f"{_k}_random", "(shape, distribution, device, dtype) -> P")
    _add(f"{_k}_cast", "(x, dtype) -> P  # same kind, other dtype")
    _add(
        " ".join(f"{_k}_{o}" for o in "add sub mul div remainder".split()),
        "(x, y) -> P  # int div truncates toward zero; remainder has the divisor's sign",
    )
    _add(
        " ".join(f"{_k}_{o}_scalar" for o in "add sub mul div remainder".split()),
        "(x, scalar) -> P",
    )
    _add(f"{_k}_matmul", "(x, y) -> P  # rank >= 2, batch dims broadcast")
    _add(f"{_k}_scatter", "(dim, x, indices, values) -> P  # adds")
    _add(f"{_k}_select_assign", "(x, dim, indices, values) -> P  # adds")
    _add(
        " ".join(
            f"{_k}_{o}"
            for o in "equal_elem greater greater_elem greater_equal greater_equal_elem lower "
            "lower_elem lower_equal lower_equal_elem".split()
        ),
        "(x, y_or_scalar) -> BoolP",
    )
    _add(f"{_k}_sum {_k}_prod", "(x) -> P of shape (1,)")
    _add(f"{_k}_sum_dim {_k}_prod_dim {_k}_mean_dim", "(x, dim) -> P  # keeps dim")
    _add(f"{_k}_argmax {_k}_argmin", "(x, dim) -> IntP  # keeps dim; first occurrence")
    _add(f"{_k}_cumsum {_k}_cumprod {_k}_cummin {_k}_cummax", "(x, dim) -> P")
    _add(f"{_k}_abs", "(x) -> P")

_add("float_into_int", "(x, dtype) -> IntP  # truncates toward zero")
_add("int_into_float", "(x, dtype) -> FloatP")
_add("bool_into_int", "(x, dtype) -> IntP")
_add("bool_into_float", "(x, dtype) -> FloatP")
_add(
    "float_exp float_log float_log1p float_sqrt float_recip float_cos float_sin float_tan float_cosh "
    "float_sinh float_tanh float_acos float_acosh float_asin float_asinh float_atan float_atanh "
    "float_round float_floor float_ceil float_trunc float_erf",
    "(x) -> P  # round: half to even, as Burn",
)
_add("float_atan2 float_powf", "(x, y) -> P")
_add("float_powf_scalar", "(x, scalar: float) -> P")
_add("int_arange_step", "(start, end, step, device, dtype) -> IntP  # 1-D")
_add("bool_not", "(x) -> BoolP")
_add("bool_and bool_or", "(x, y) -> BoolP")
_add(
    "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift",
    "(x, y) -> IntP",
)
_add(
    "bitwise_and_scalar bitwise_or_scalar bitwise_xor_scalar bitwise_left_shift_scalar "
    "bitwise_right_shift_scalar",
    "(x, scalar) -> IntP",
)
_add("bitwise_not", "(x) -> IntP")
# Module ops (see _ops_module.py for the option types)
_add(
    "conv2d",
    "(x [n, c_in, h, w], weight [c_out, c_in/groups, kh, kw], bias [c_out] | None, options: ConvOptions) -> P",
)
_add(
    "conv_transpose2d",
    "(x, weight [c_in, c_out/groups, kh, kw], bias | None, options: ConvTransposeOptions) -> P",
)
_add("avg_pool2d", "(x, kernel_size, stride, padding, count_include_pad) -> P")
_add("avg_pool2d_backward", "(x, grad, kernel_size, stride, padding, count_include_pad) -> P")
_add(
    "max_pool2d_with_indices",
    "(x, kernel_size, stride, padding, dilation) -> (P, IntP flat h*w index)"
    "  # ties: first in kernel (row-major) order; a NaN wins its window (PyTorch)",
)
_add(
    "max_pool2d_with_indices_backward",
    "(x, kernel_size, stride, padding, dilation, output_grad, indices) -> P",
)
_add("adaptive_avg_pool2d", "(x, output_size) -> P")
_add("adaptive_avg_pool2d_backward", "(x, grad) -> P")
_add("interpolate", "(x, output_size, options: InterpolateOptions) -> P")
_add("interpolate_backward", "(x, grad, output_size, options: InterpolateOptions) -> P")


def _stub(name: str, sig: str):
    def op(self, *args, **kwargs):
        raise NotImplementedError(
            f"backend {type(self).__name__} does not implement required op '{name}{sig}'"
        )

    op.__name__ = name
    op.__qualname__ = name
    op.__doc__ = f"Required op: {name}{sig}"
    op.__burn_required__ = True
    return op


def install_required(
    cls: type, prefixes: tuple[str, ...] = (), names: tuple[str, ...] = ()
) -> type:
    """Add a stub for every required op of this family that `cls` does not define."""
    for name, sig in REQUIRED.items():
        if (name.startswith(prefixes) if prefixes else False) or name in names:
            if name not in vars(cls):
                setattr(cls, name, _stub(name, sig))
    return cls


def required_ops() -> list[str]:
    return sorted(REQUIRED)
