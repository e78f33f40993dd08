"""Rank, kind, shape, dtype, device and index mismatches raise one `TensorCheckError` that names
the op and lists every violation (Burn's `TensorCheck`). One test per op family."""

import re

import numpy as np
import pytest
from burn_tensor import Bool, Float, Int, Tensor, TensorCheckError, activation, s


def raises(op, *violations):
    """Expect a TensorCheckError for `op` whose message contains every violation fragment."""

    class _Ctx:
        def __enter__(self):
            self._cm = pytest.raises(TensorCheckError)
            self.info = self._cm.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self._cm.__exit__(*exc)
            err = self.info.value
            msg = str(err)
            assert err.op == op, f"op {err.op!r} != {op!r}: {msg}"
            assert msg.startswith(f"Tensor operation '{op}' is invalid:"), msg
            for v in violations:
                assert re.search(v, msg), f"{v!r} not in {msg!r}"
            return handled

    return _Ctx()


@pytest.fixture
def f(device):
    return lambda *shape: Tensor.ones(list(shape), device)


def test_error_type_is_both_type_and_value_error(f):
    err = TensorCheckError("add", ["a", "b"])
    assert isinstance(err, TypeError) and isinstance(err, ValueError)
    assert (
        err.violations == ["a", "b"]
        and str(err) == "Tensor operation 'add' is invalid:\n  - a\n  - b"
    )


def test_binary_family(device, device64, f):
    with raises("add", r"ranks differ: lhs rank 2 \[2, 3\], rhs rank 1 \[3\]", "unsqueeze"):
        f(2, 3).add(f(3))
    with raises("mul", r"shapes \[2, 3\] and \[2, 4\] are not broadcastable at dim\(s\) \[1\]"):
        f(2, 3) * f(2, 4)
    with raises("sub", "kinds differ: lhs is Float, rhs is Int"):
        f(2).sub(Tensor.ones([2], device, kind=Int))
    other = Tensor.ones([2], device64)
    with raises("add", "devices differ"):
        f(2).add(other)
    # every violation is listed at once
    with raises("div", "kinds differ", "devices differ", "ranks differ"):
        f(2, 2).div(Tensor.ones([2], device64, kind=Int))
    with raises("add", "expected a number, got 'x'"):
        f(2).add("x")


def test_comparison_family(device, f):
    with raises("greater", "ranks differ"):
        f(2, 2).greater(f(2))
    with raises("equal", "not broadcastable"):
        f(3).equal(f(2))
    with raises("lower_elem", "expected a Float or Int tensor, got Bool"):
        Tensor.from_data([True], device).lower_elem(1)
    with raises("is_close", "shapes"):
        f(3).is_close(f(4))


def test_kind_family(device, f):
    i = Tensor.from_data([1, 2], device)
    b = Tensor.from_data([True, False], device)
    with raises("exp", "is only defined for Float tensors, got Int"):
        i.exp()
    with raises("var_mean", "only defined for Float tensors, got Int"):
        i.var(0)
    with raises("add", "expected a Float or Int tensor, got Bool"):
        b + b
    with raises("sum", "got Bool"):
        b.sum()
    with raises("bool_not", "expected a Bool tensor, got Float"):
        f(2).bool_not()
    with raises("bitwise_and", "expected a Int tensor, got Float"):
        f(2).bitwise_and(f(2))
    with raises("argwhere", "expected a Bool tensor"):
        i.argwhere()
    with raises("softmax", "only defined for Float tensors, got Int"):
        activation.softmax(i, 0)
    with raises("matmul", "kinds differ: Float vs Int"):
        f(2, 2).matmul(Tensor.ones([2, 2], device, dtype="int32"))


def test_dtype_family(device):
    i = Tensor.from_data([1, 2], device)
    with raises("cast", "cannot cast a Int tensor to float32"):
        i.cast("float32")
    with raises("zeros", "dtype int32 does not match kind Float"):
        Tensor.zeros([2], device, kind=Float, dtype="int32")
    with raises("add", "non-integral scalar 1.5"):
        i + 1.5
    with raises("mask_fill", "non-integral scalar 0.5"):
        i.mask_fill(Tensor.from_data([True, False], device), 0.5)
    with raises("from_ints", "expected integers"):
        Tensor.from_ints([1.5], device)


def test_matmul_family(f):
    with raises("matmul", r"inner dims differ: lhs \[2, 3\] has 3, rhs \[4, 5\] has 4"):
        f(2, 3).matmul(f(4, 5))
    with raises("matmul", "expected equal ranks >= 2"):
        f(3).matmul(f(3))
    with raises("matmul", r"batch dims \[0\]"):
        f(2, 2, 3).matmul(f(3, 3, 2))
    with raises("dot", "expected 1-D tensors"):
        f(2, 2).dot(f(2, 2))


def test_reshape_family(f):
    with raises("reshape", r"\[2, 3\] has 6 elements, \[4, 2\] needs 8"):
        f(2, 3).reshape([4, 2])
    with raises("reshape", "only one -1"):
        f(2, 3).reshape([-1, -1])
    with raises("squeeze_dim", "dim 0 has size 2, expected 1"):
        f(2, 3).squeeze_dim(0)
    with raises("unsqueeze_dim", "dim 4 out of range for a rank-3 tensor"):
        f(2, 3).unsqueeze_dim(4)
    with raises("permute", r"axes \[0, 0\] are not a permutation of 2 dims"):
        f(2, 3).permute([0, 0])
    with raises("flip", "repeated axes"):
        f(2, 3).flip([1, -1])
    with raises("expand", "dim 1 of size 3 cannot expand to 4"):
        f(2, 3).expand([2, 4])
    with raises("expand", "fewer dims"):
        f(2, 3).expand([6])
    with raises("flatten", "start_dim 1 > end_dim 0"):
        f(2, 3).flatten(1, 0)


def test_dim_family(f):
    with raises("sum_dim", "dim 2 out of range for a rank-2 tensor"):
        f(2, 3).sum_dim(2)
    with raises("argmax", "dim -3 out of range"):
        f(2, 3).argmax(-3)
    with raises("cumsum", "dim must be an int"):
        f(2, 3).cumsum(1.0)
    with raises("swap_dims", "out of range"):
        f(2, 3).swap_dims(0, 5)


def test_slice_family(f):
    with raises("slice", "3 slice items for a rank-2 tensor"):
        f(2, 3)[0, 0, 0]
    with raises("slice", "dim 1: index 3 out of range for size 3"):
        f(2, 3).slice(s[:, 3])
    with raises("slice", "descending", "negative step"):
        f(4).slice(s[3:1])
    with raises("slice", "step must not be 0"):
        f(4).slice([slice(None, None, 0)])
    with raises("slice_assign", r"values shape \[2, 2\] != slice shape \[1, 3\]"):
        f(2, 3).slice_assign(s[0], f(2, 2))
    with raises("narrow", "out of range for dim 0 of size 4"):
        f(4).narrow(0, 3, 2)
    with raises("chunk", "chunks must be > 0"):
        f(4).chunk(0, 0)


def test_combine_family(device, device64, f):
    with raises("cat", r"tensor 1 shape \[2, 4\] differs from \[2, 3\] off dim 0"):
        Tensor.cat([f(2, 3), f(2, 4)], 0)
    with raises("cat", "tensor 1 has rank 1, tensor 0 has rank 2"):
        Tensor.cat([f(2, 3), f(3)], 0)
    with raises(
        "cat", "tensor 1 is Int, tensor 0 is Float", "tensor 2 is float64 on Cpu of NdArray"
    ):
        Tensor.cat([f(2), Tensor.from_data([1, 2], device), Tensor.ones([2], device64)], 0)
    with raises("cat", "at least one tensor"):
        Tensor.cat([], 0)
    with raises("stack", r"tensor 1 shape \[3\] != \[2\]"):
        Tensor.stack([f(2), f(3)], 0)
    # stack checks kind and device itself (it used to leave them to a `cat` of unsqueezed
    # tensors, whose error named cat), every problem in one error
    with raises(
        "stack",
        "tensor 1 is Int, tensor 0 is Float",
        r"tensor 1 shape \[3\] != \[2\]",
        "tensor 2 is float64 on Cpu of NdArray",
    ):
        Tensor.stack([f(2), Tensor.from_data([1, 2, 3], device), Tensor.ones([2], device64)], 0)
    with raises("stack", "at least one tensor"):
        Tensor.stack([], 0)


def test_index_family(device, f):
    idx = Tensor.from_data([0, 1], device)
    with raises("gather", "indices must be an Int tensor, got Float"):
        f(2, 2).gather(0, f(2, 2))
    with raises("gather", r"indices shape \[3, 1\] must match \[2, 2\] except at dim 1"):
        f(2, 2).gather(1, Tensor.zeros([3, 1], device, dtype="int32"))
    with raises("select", r"indices must be 1-D, got shape \[1, 2\]"):
        f(2, 2).select(0, idx.reshape([1, 2]))
    with raises("select_assign", r"values of shape \[2, 2\]"):
        f(2, 2).select_assign(0, idx, f(3, 2))
    with raises("scatter", "must have equal shapes"):
        f(3).scatter(0, Tensor.from_data([1, 0, 2], device), f(2))
    with raises("mask_where", "mask must be a Bool tensor, got Float"):
        f(2).mask_where(f(2), f(2))
    with raises("mask_fill", r"shapes \[2\] and \[3\] differ"):
        f(2).mask_fill(Tensor.from_data([True, False, True], device), 0.0)
    with raises("one_hot", r"class index 3 out of range for dim 1 of size 3 \(valid: 0..2\)"):
        Tensor.from_data([0, 3], device).one_hot(3)
    with raises("one_hot", "index 5 out of range for 3 classes"):
        Tensor.one_hot(5, 3, device)


def test_misc_family(device, f):
    with raises("into_scalar", r"expected a single-element tensor, got shape \[2\]"):
        f(2).into_scalar()
    with raises("topk", "k=3 out of range for dim 0 of size 2"):
        f(2).topk(3, 0)
    with raises("clamp", r"min \(2\) must be <= max \(1\)"):
        f(2).clamp(2, 1)
    with raises("pad", "negative padding"):
        f(2, 2).pad((-1, 0))
    with raises("pad", "must be pairs"):
        f(2, 2).pad((1,))
    with raises("tril", "expected rank >= 2"):
        f(3).tril()
    with raises("arange_step", "step must not be 0"):
        Tensor.arange_step(0, 3, 0, device)
    with raises("random", "Bool tensors cannot be sampled"):
        Tensor.random([2], None, device, kind=Bool)
    with raises("powi_scalar", "exponent must be an integer"):
        f(2).powi_scalar(1.5)


def test_failed_checks_leave_state_intact(f):
    t = f(2, 3)
    before = t.to_data()
    with pytest.raises(TensorCheckError):
        t.slice_assign(s[0], f(2, 2))
    t.to_data().assert_eq(before)
    np.testing.assert_array_equal(t.numpy(), np.ones((2, 3)))
