"""Reductions, scans, sorting and statistics of `Tensor`."""

from __future__ import annotations

from . import _check as check
from ._dtype import Bool, Float, Int
from ._errors import TensorCheckError

_new = object.__new__


def _empty(op: str, shape, dim: int | None = None):
    """An empty max/min/arg* has no value (numpy: "zero-size array"); name the op instead."""
    if dim is None:
        return TensorCheckError(op, f"the tensor of shape {list(shape)} is empty: no {op} value")
    return TensorCheckError(
        op, f"dim {dim} of shape {list(shape)} is empty: no {op} value along it"
    )


def _empty_result(t, op: str, dim: int | None):
    """The result of `mean` over nothing is NaN (numpy, PyTorch; numpy also warns, which tests
    turn into errors); Int tensors have no NaN, and max/min have no value at all: raise."""
    if op.startswith("mean") and t._o.kind is Float:
        shape = [1] if dim is None else [1 if i == dim else n for i, n in enumerate(t._p.shape)]
        return type(t).full(shape, float("nan"), t._d, dtype=t.dtype)
    raise _empty(op, t._p.shape, dim)


def _torch_dim_habit(name: str, args, kwargs) -> TensorCheckError:
    """`t.sum(1)` is PyTorch's reduction along dim 1 with the dim dropped; Burn's `sum` takes no
    dim and `sum_dim` keeps it, so guessing would give a tensor of the wrong rank: name the
    Burn methods instead."""
    given = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    return TensorCheckError(
        name,
        f"`{name}()` reduces every element and takes no dim (got {name}({given})): use "
        f"`{name}_dim(dim)` (keeps the dim with size 1, as Burn) or "
        f"`{name}_dim(dim).squeeze_dim(dim)` (drops it, as torch's `{name}(dim)`)",
    )


def _reduce_all(name, needs_values=False):
    # Hot path (`t.sum()`): the checks and `_like` inlined, one Python frame in all.
    # `needs_values` (max, min): an empty tensor has no result, unlike sum (0) or prod (1).
    def method(self, *args, **kwargs):
        if args or kwargs:
            raise _torch_dim_habit(name, args, kwargs)
        o = self._o
        if o.kind is Bool:
            check.numeric(name, self)
        if needs_values and 0 in self._p.shape:
            return _empty_result(self, name, None)
        t = _new(type(self))
        t._p = getattr(o, name)(self._p)
        t._o = o
        t._d = self._d
        return t

    method.__name__ = name
    method.__doc__ = f"`{name}` of all elements -> shape [1]."
    return method


def _reduce_dim(name, needs_values=False):
    def method(self, dim: int):
        o = self._o
        if o.kind is Bool:
            check.numeric(name, self)
        p = self._p
        r = len(p.shape)
        if type(dim) is int and -r <= dim < r:  # check.dim's common case, inlined
            d = dim + r if dim < 0 else dim
        else:
            d = check.dim(name, dim, r)
        if needs_values and p.shape[d] == 0:
            return _empty_result(self, name, d)
        t = _new(type(self))
        t._p = getattr(o, name)(p, d)
        t._o = o
        t._d = self._d
        return t

    method.__name__ = name
    method.__doc__ = (
        f"`{name}` along `dim`, keeping it with size 1. Shapes: [.., n, ..] -> [.., 1, ..]"
    )
    return method


def _arg_dim(name):
    def method(self, dim: int):
        check.numeric(name, self)
        d = check.dim(name, dim, len(self._p.shape))
        if self._p.shape[d] == 0:
            raise _empty(name, self._p.shape, d)
        return self._as(getattr(self._o, name)(self._p, d), Int)

    method.__name__ = name
    method.__doc__ = (
        f"Int tensor: the index of the {name[3:]}imum along `dim`, `dim` kept with size 1 "
        f"(Burn's `{name}`)."
    )
    return method


def _scan(name):
    def method(self, dim: int):
        check.numeric(name, self)
        d = check.dim(name, dim, len(self._p.shape))
        return self._like(getattr(self._o, name)(self._p, d))

    method.__name__ = name
    method.__doc__ = f"Cumulative `{name[3:]}` along `dim`. Shapes: [d...] -> [d...]"
    return method


class ReduceMixin:
    __slots__ = ()

    sum = _reduce_all("sum")
    prod = _reduce_all("prod")
    mean = _reduce_all("mean", needs_values=True)
    max = _reduce_all("max", needs_values=True)
    min = _reduce_all("min", needs_values=True)
    max_abs = _reduce_all("max_abs", needs_values=True)
    sum_dim = _reduce_dim("sum_dim")
    prod_dim = _reduce_dim("prod_dim")
    mean_dim = _reduce_dim("mean_dim", needs_values=True)
    max_dim = _reduce_dim("max_dim", needs_values=True)
    min_dim = _reduce_dim("min_dim", needs_values=True)
    max_abs_dim = _reduce_dim("max_abs_dim", needs_values=True)
    argmax = _arg_dim("argmax")
    argmin = _arg_dim("argmin")
    cumsum = _scan("cumsum")
    cumprod = _scan("cumprod")
    cummin = _scan("cummin")
    cummax = _scan("cummax")

    def _dims(self, op, fn, dims):
        out = self
        for d in sorted({check.dim(op, d, len(self._p.shape)) for d in dims}):
            out = fn(out, d)
        return out

    def sum_dims(self, dims):
        """The sum over every dim in `dims`, each kept with size 1 (Burn's `sum_dims`): [2, 3,
        4].sum_dims([0, 2]) -> [1, 3, 1].
        """
        return self._dims("sum_dims", type(self).sum_dim, dims)

    def mean_dims(self, dims):
        """The mean over every dim in `dims`, each kept with size 1 (Burn's `mean_dims`)."""
        return self._dims("mean_dims", type(self).mean_dim, dims)

    def prod_dims(self, dims):
        """The product over every dim in `dims`, each kept with size 1 (Burn's `prod_dims`)."""
        return self._dims("prod_dims", type(self).prod_dim, dims)

    def max_dims(self, dims):
        """The maximum over every dim in `dims`, each kept with size 1 (Burn's `max_dims`)."""
        return self._dims("max_dims", type(self).max_dim, dims)

    def min_dims(self, dims):
        """The minimum over every dim in `dims`, each kept with size 1 (Burn's `min_dims`)."""
        return self._dims("min_dims", type(self).min_dim, dims)

    def sum_dims_squeeze(self, dims):
        """The sum over every dim in `dims`, those dims removed (Burn's `sum_dims_squeeze`): [2, 3,
        4] -> [3] for dims [0, 2].
        """
        return self.sum_dims(dims).squeeze_dims(dims)

    def max_dim_with_indices(self, dim: int):
        """(values, Int indices) of the maximum along `dim`, `dim` kept with size 1 (Burn's
        `max_dim_with_indices`).
        """
        check.numeric("max_dim_with_indices", self)
        d = check.dim("max_dim_with_indices", dim, len(self._p.shape))
        if self._p.shape[d] == 0:
            raise _empty("max_dim_with_indices", self._p.shape, d)
        v, i = self._o.max_dim_with_indices(self._p, d)
        return self._like(v), self._as(i, Int)

    def min_dim_with_indices(self, dim: int):
        """(values, Int indices) of the minimum along `dim`, `dim` kept with size 1 (Burn's
        `min_dim_with_indices`).
        """
        check.numeric("min_dim_with_indices", self)
        d = check.dim("min_dim_with_indices", dim, len(self._p.shape))
        if self._p.shape[d] == 0:
            raise _empty("min_dim_with_indices", self._p.shape, d)
        v, i = self._o.min_dim_with_indices(self._p, d)
        return self._like(v), self._as(i, Int)

    # -- any / all ---------------------------------------------------------------------------------
    def any(self):
        """True if any element is nonzero/true -> Bool shape [1]."""
        return self._as(self._o.any(self._p), Bool)

    def all(self):
        """Bool tensor [1]: whether every element is true / nonzero (Burn's `all`)."""
        return self._as(self._o.all(self._p), Bool)

    def any_dim(self, dim: int):
        """Bool tensor: whether any element along `dim` is true / nonzero, `dim` kept with size 1
        (Burn's `any_dim`).
        """
        d = check.dim("any_dim", dim, len(self._p.shape))
        return self._as(self._o.any_dim(self._p, d), Bool)

    def all_dim(self, dim: int):
        """Bool tensor: whether every element along `dim` is true / nonzero, `dim` kept with size 1
        (Burn's `all_dim`).
        """
        d = check.dim("all_dim", dim, len(self._p.shape))
        return self._as(self._o.all_dim(self._p, d), Bool)

    # -- statistics --------------------------------------------------------------------------------
    def var(self, dim: int):
        """Unbiased variance (n - 1) along `dim`, kept. Float only."""
        return self.var_mean(dim)[0]

    def var_bias(self, dim: int):
        """Biased variance (n) along `dim`, kept."""
        return self.var_mean_bias(dim)[0]

    def var_mean(self, dim: int):
        """(variance, mean) along `dim` with Bessel's correction (n - 1), `dim` kept with size 1
        (Burn's `var_mean`).
        """
        return self._var_mean("var_mean", dim, 1)

    def var_mean_bias(self, dim: int):
        """(variance, mean) along `dim`, biased (divides by n), `dim` kept with size 1 (Burn's
        `var_mean_bias`).
        """
        return self._var_mean("var_mean_bias", dim, 0)

    def _var_mean(self, op, dim, correction):
        check.float_(op, self)
        d = check.dim(op, dim, len(self._p.shape))
        n = self._p.shape[d]
        mean = self.mean_dim(d)
        centered = self.sub(mean)
        ss = centered.mul(centered).sum_dim(d)
        denom = n - correction
        if denom <= 0:
            return ss.mul_scalar(float("nan")), mean
        return ss.div_scalar(float(denom)), mean

    # -- sorting -----------------------------------------------------------------------------------
    def sort(self, dim: int = -1, descending: bool = False):
        """Sorted values along `dim` (stable)."""
        check.numeric("sort", self)
        d = check.dim("sort", dim, len(self._p.shape))
        return self._like(self._o.sort(self._p, d, descending))

    def sort_descending(self, dim: int = -1):
        """The values sorted along `dim`, largest first (Burn's `sort_descending`); same shape."""
        return self.sort(dim, True)

    def sort_with_indices(self, dim: int = -1, descending: bool = False):
        """(values, Int indices) sorted along `dim`, ascending unless `descending` (Burn's
        `sort_with_indices`).
        """
        check.numeric("sort_with_indices", self)
        d = check.dim("sort_with_indices", dim, len(self._p.shape))
        v, i = self._o.sort_with_indices(self._p, d, descending)
        return self._like(v), self._as(i, Int)

    def sort_descending_with_indices(self, dim: int = -1):
        """(values, Int indices) sorted along `dim`, largest first (Burn's
        `sort_descending_with_indices`).
        """
        return self.sort_with_indices(dim, True)

    def argsort(self, dim: int = -1, descending: bool = False):
        """Int indices that sort along `dim` (stable)."""
        check.numeric("argsort", self)
        d = check.dim("argsort", dim, len(self._p.shape))
        return self._as(self._o.argsort(self._p, d, descending), Int)

    def argsort_descending(self, dim: int = -1):
        """Int indices that sort along `dim`, largest first (Burn's `argsort_descending`); same
        shape.
        """
        return self.argsort(dim, True)

    def topk_with_indices(self, k: int, dim: int = -1):
        """The k largest values along `dim`, descending, with their indices."""
        check.numeric("topk", self)
        d = check.dim("topk", dim, len(self._p.shape))
        if not 0 <= k <= self._p.shape[d]:
            raise TensorCheckError(
                "topk", f"k={k} out of range for dim {d} of size {self._p.shape[d]}"
            )
        if self._o.kind is Float:
            v, i = self._o.topk_with_indices(self._p, k, d)
            return self._like(v), self._as(i, Int)
        v, i = self.sort_with_indices(d, True)
        return v.narrow(d, 0, k), i.narrow(d, 0, k)

    def topk(self, k: int, dim: int = -1):
        """The `k` largest values along `dim`, largest first (Burn's `topk`); `dim` becomes `k`."""
        return self.topk_with_indices(k, dim)[0]

    def argtopk(self, k: int, dim: int = -1):
        """Int indices of the `k` largest elements along `dim`, largest first (Burn's `argtopk`);
        `dim` becomes `k`.
        """
        return self.topk_with_indices(k, dim)[1]

    def median(self, dim: int):
        """Lower median along `dim`, kept (torch.median)."""
        return self.median_with_indices(dim)[0]

    def median_with_indices(self, dim: int):
        """(values, Int indices) of the median along `dim` (the lower one for an even count), `dim`
        kept with size 1 (Burn's `median_with_indices`).
        """
        check.numeric("median", self)
        d = check.dim("median", dim, len(self._p.shape))
        n = self._p.shape[d]
        if n == 0:
            raise TensorCheckError("median", f"dim {d} is empty")
        v, i = self.sort_with_indices(d)
        k = (n - 1) // 2
        return v.narrow(d, k, 1), i.narrow(d, k, 1)
