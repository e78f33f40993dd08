"""Helpers of the conformance suite: build inputs on the backend under test, compare with numpy.

References are always computed by numpy in float64 on copies of the inputs *after* they were
rounded to the backend's element type, so the suite checks the op, not the input rounding.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import Bool, DType, Float, Int, Tensor, TensorData, Tolerance

#: how an input tensor is produced: directly, or through a view op that leaves it non-contiguous
LAYOUTS = ("contiguous", "permuted", "flipped", "strided", "expanded")

_TOL = {
    DType.F64: Tolerance.rel_abs(1e-9, 1e-12),
    DType.F32: Tolerance.rel_abs(2e-5, 1e-6),
    DType.F16: Tolerance.rel_abs(5e-3, 1e-3),
    # bfloat16 keeps 8 significant bits (float16: 11): ten of its ulps, as float16's 5e-3
    DType.BF16: Tolerance.rel_abs(4e-2, 8e-3),
}
_LOOSE = {
    DType.F64: Tolerance.rel_abs(1e-8, 1e-10),
    DType.F32: Tolerance.rel_abs(2e-4, 1e-4),
    DType.F16: Tolerance.permissive(),
    DType.BF16: Tolerance.rel_abs(8e-2, 8e-2),
}


class Ctx:
    """The backend under test plus helpers; the `burn` fixture of the suite.

    Example (inside a suite test):
        t = burn.float(np.ones((2, 3)), layout="permuted")
        burn.assert_close(t.exp(), np.exp(burn.ref(np.ones((2, 3)))))
    """

    def __init__(self, backend):
        self.backend = backend
        self.device = backend.device()
        self.fdt: DType = backend.float_dtype
        self.idt: DType = backend.int_dtype
        self.tol = _TOL.get(self.fdt, Tolerance.default())
        #: for results accumulated over many elements (sums, matmul, softmax, variance)
        self.loose = _LOOSE.get(self.fdt, Tolerance.permissive())

    def __repr__(self) -> str:
        return f"Ctx({self.backend!r})"

    # -- element types -----------------------------------------------------------------------------
    def dtype_of(self, kind) -> DType:
        return {Float: self.fdt, Int: self.idt, Bool: DType.BOOL}[kind]

    def cast(self, x, kind=Float) -> np.ndarray:
        """`x` as the backend stores it (rounded to its element type).

        A float beyond the type's range rounds to +-inf, as IEEE rounding (and the backend's own
        conversion) does: 1e30 is inf in float16. numpy warns about that overflow; here it is the
        intended rounding, so the warning is silenced (the suite runs with warnings as errors).
        """
        with np.errstate(over="ignore"):
            return np.asarray(x).astype(self.dtype_of(kind).np)

    def ref(self, x, kind=Float) -> np.ndarray:
        """float64 (or int64 / bool) copy of `x` after rounding to the backend's type: the reference input."""
        arr = self.cast(x, kind)
        if kind is Float:
            return arr.astype(np.float64)
        if kind is Int:
            return arr.astype(np.int64)
        return arr.astype(np.bool_)

    def literal_tol(self, tol: Tolerance) -> Tolerance:
        """The tolerance for a literal expected value written for float32 (Burn's own tests).

        `tol` itself where the backend's float type keeps float32's 24 significant bits or more;
        in float16 / bfloat16 (11 / 8 bits) the wider of `tol` and the type's own tolerance
        (`self.tol`, about five of its ulps): the result alone rounds by up to 2^-11 / 2^-8 of
        itself (2185 is 2184 in float16, 635 is 636 in bfloat16), and literal inputs such as
        0.2641, or an arange past 2^11 / 2^8, round before the op sees them.
        """
        if self.fdt.size >= 4:
            return tol
        return Tolerance(max(tol.relative, self.tol.relative), max(tol.absolute, self.tol.absolute))

    # -- tensors -----------------------------------------------------------------------------------
    def tensor(self, x, kind=Float, layout: str = "contiguous") -> Tensor:
        """Tensor of `x`'s values built through `layout` (see `LAYOUTS`).

        `expanded` changes the values (dim 0 is broadcast from its first row): use `view_input` to get
        the values together with the tensor.
        """
        return self.view_input(x, kind, layout)[0]

    def view_input(self, x, kind=Float, layout: str = "contiguous"):
        """(tensor, reference values) for `x` built through `layout`."""
        arr = self.cast(x, kind)
        dt = self.dtype_of(kind)
        mk = lambda a: Tensor.from_data(TensorData(np.ascontiguousarray(a)), self.device, dt)
        nd = arr.ndim
        if layout == "contiguous" or nd == 0:
            t = mk(arr)
        elif layout == "permuted":
            if nd < 2:
                t = mk(arr)
            else:
                axes = tuple(reversed(range(nd)))
                t = mk(arr.transpose(axes)).permute(axes)
        elif layout == "flipped":
            axes = tuple(range(nd))
            t = mk(np.flip(arr, axes)).flip(axes)
        elif layout == "strided":
            shape = list(arr.shape)
            shape[-1] *= 2
            big = np.zeros(shape, arr.dtype)
            big[..., ::2] = arr
            t = mk(big).slice([slice(None)] * (nd - 1) + [slice(None, None, 2)])
        elif layout == "expanded":
            if arr.shape[0] == 0:
                t = mk(arr)
            else:
                arr = np.broadcast_to(arr[:1], arr.shape).copy()
                t = mk(arr[:1]).expand(arr.shape)
        else:
            raise ValueError(f"unknown layout {layout!r}")
        return t, self.ref(arr, kind)

    def float(self, x, layout: str = "contiguous") -> Tensor:
        return self.tensor(x, Float, layout)

    def int(self, x, layout: str = "contiguous") -> Tensor:
        return self.tensor(x, Int, layout)

    def bool(self, x, layout: str = "contiguous") -> Tensor:
        return self.tensor(x, Bool, layout)

    # -- assertions --------------------------------------------------------------------------------
    def _check_meta(self, t: Tensor, expected: np.ndarray, kind) -> None:
        assert isinstance(t, Tensor), f"expected a Tensor, got {type(t).__name__}"
        assert t.kind is kind, f"kind: got {t.kind}, expected {kind}"
        assert t.dtype is self.dtype_of(kind), (
            f"dtype: got {t.dtype}, expected {self.dtype_of(kind)}"
        )
        assert tuple(t.shape) == tuple(expected.shape), (
            f"shape: got {list(t.shape)}, expected {list(expected.shape)}"
        )
        assert t.device is self.device, f"device: got {t.device!r}, expected {self.device!r}"

    def assert_close(self, t: Tensor, expected, tol: Tolerance | None = None) -> None:
        """Float result: kind, dtype, shape and values within the dtype's tolerance (NaN == NaN)."""
        expected = np.asarray(expected, dtype=np.float64)
        self._check_meta(t, expected, Float)
        t.to_data().assert_approx_eq(TensorData(expected), tol or self.tol)

    def assert_equal(self, t: Tensor, expected, kind=None) -> None:
        """Exact result of `kind` (inferred from `expected`): kind, dtype, shape and values."""
        expected = np.asarray(expected)
        if kind is None:
            kind = (
                Bool
                if expected.dtype == np.bool_
                else Int
                if expected.dtype.kind in "iu"
                else Float
            )
        self._check_meta(t, expected, kind)
        got = t.to_data().array
        if kind is Float:
            ok = (got.astype(np.float64) == expected) | (np.isnan(got) & np.isnan(expected))
            assert np.all(ok), f"values differ:\n got {got.tolist()}\n expected {expected.tolist()}"
        else:
            assert np.array_equal(got.astype(expected.dtype), expected), (
                f"values differ:\n got {got.tolist()}\n expected {expected.tolist()}"
            )

    def assert_result(self, t: Tensor, expected, kind, tol: Tolerance | None = None) -> None:
        """`assert_close` for Float results, else `assert_equal` (expected cast to int64 / bool)."""
        if kind is Float:
            self.assert_close(t, expected, tol)
        else:
            self.assert_equal(
                t, np.asarray(expected).astype(np.int64 if kind is Int else np.bool_), kind
            )


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def sample(shape, domain: str = "any", seed: int = 0) -> np.ndarray:
    """float64 inputs on a domain: any, pos, unit (-1, 1), ge1 [1, 5), small [-2, 2), int."""
    g = rng(seed)
    if domain == "any":
        return g.normal(0.0, 2.0, shape)
    if domain == "pos":
        return g.uniform(0.1, 5.0, shape)
    if domain == "unit":
        return g.uniform(-0.95, 0.95, shape)
    if domain == "ge1":
        return g.uniform(1.05, 5.0, shape)
    if domain == "small":
        return g.uniform(-2.0, 2.0, shape)
    if domain == "int":
        return g.integers(-9, 10, shape).astype(np.float64)
    if domain == "nonzero_int":
        v = g.integers(1, 10, shape) * g.choice([-1, 1], shape)
        return v.astype(np.float64)
    raise ValueError(domain)


#: float values that exercise IEEE edge cases
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e-30, 0.5, -2.5])
