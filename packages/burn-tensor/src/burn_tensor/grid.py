"""Grids and sampling: Burn's `burn::tensor::grid` (`burn.tensor.grid` in the facade).

`meshgrid`, `meshgrid_stack`, `affine_grid_2d` here; `Tensor.cartesian_grid` and
`Tensor.grid_sample_2d` are Tensor methods (as in Burn). Each dispatches to a backend op with a
default decomposition (`_ops_grid.py`), so every backend runs it and Autodiff differentiates it.

Example:
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor, grid
    >>> dev = NdArray().device()
    >>> xs, ys = grid.meshgrid([Tensor.arange(3, dev), Tensor.arange(2, dev)])
    >>> xs.tolist(), ys.tolist()
    ([[0, 0], [1, 1], [2, 2]], [[0, 1], [0, 1], [0, 1]])
"""

from __future__ import annotations

from . import _check as check

from ._errors import TensorCheckError
from ._options_grid import (
    GridIndexing,
    GridOptions,
    GridSampleOptions,
    GridSamplePaddingMode,
    GridSparsity,
    IndexPos,
)

__all__ = [
    "GridIndexing",
    "GridOptions",
    "GridSampleOptions",
    "GridSamplePaddingMode",
    "GridSparsity",
    "IndexPos",
    "affine_grid_2d",
    "meshgrid",
    "meshgrid_stack",
]


def _options(options) -> GridOptions:
    if options is None:
        return GridOptions()
    if isinstance(options, GridOptions):
        return options
    if options in (GridIndexing.Matrix, GridIndexing.Cartesian):
        return GridOptions(indexing=options)
    if options in (GridSparsity.Dense, GridSparsity.Sparse):
        return GridOptions(sparsity=options)
    raise TensorCheckError(
        "meshgrid",
        f"options must be a GridOptions, a GridIndexing or a GridSparsity, got {options!r}",
    )


def _vectors(op: str, tensors) -> list:
    from ._tensor import Tensor

    ts = list(tensors)
    if not ts:
        raise TensorCheckError(op, "needs at least one tensor")
    problems = []
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            problems.append(f"tensor {i} is a {type(t).__name__}, not a Tensor")
        elif len(t._p.shape) != 1:
            problems.append(f"tensor {i} has shape {list(t._p.shape)}, expected 1-D")
        elif t._o.kind is not ts[0]._o.kind:
            problems.append(f"tensor {i} is {t._o.kind.value}, tensor 0 {ts[0]._o.kind.value}")
        elif t._d is not ts[0]._d:
            problems.append(f"tensor {i}: " + check.device_mismatch(ts[0], t, ("0", str(i))))
    if problems:
        raise TensorCheckError(op, problems)
    return ts


def meshgrid(tensors, options=None) -> list:
    """Coordinate tensors of the grid spanned by 1-D tensors (Burn's `meshgrid`).

    Args:
        tensors: N 1-D tensors of one kind and device, sizes s0..s_{N-1}.
        options: `GridOptions(indexing, sparsity)`, or just a `GridIndexing` / `GridSparsity`.
            "matrix" indexing (numpy "ij", default) gives shape [s0, .., s_{N-1}]; "cartesian"
            ("xy") swaps the first two dims. "sparse" keeps size 1 off each tensor's own dim.

    Returns:
        a list of N tensors of rank N.
    """
    opts = _options(options)
    ts = _vectors("meshgrid", tensors)
    cart = opts.indexing == GridIndexing.Cartesian
    dense = opts.sparsity == GridSparsity.Dense
    outs = ts[0]._o.meshgrid([t._p for t in ts], cart, dense)
    return [ts[0]._like(p) for p in outs]


def meshgrid_stack(tensors, index_pos: str = IndexPos.First):
    """The dense "matrix" meshgrid stacked into one tensor (Burn's `meshgrid_stack`).

    Shapes: N tensors of sizes s_i -> [N, s0, .., s_{N-1}] ("first") or [s0, .., s_{N-1}, N]
    ("last").
    """
    from ._tensor import Tensor

    if index_pos not in (IndexPos.First, IndexPos.Last):
        raise TensorCheckError(
            "meshgrid_stack", f"index_pos must be 'first' or 'last', got {index_pos!r}"
        )
    xs = meshgrid(tensors)
    return Tensor.stack(xs, 0 if index_pos == IndexPos.First else len(xs))


def affine_grid_2d(transform, dims):
    """Sampling grid of 2-D affine transforms (Burn's `affine_grid_2d`).

    The base grid has pixel centers from -1 to 1 (torch's `F.affine_grid(theta, size,
    align_corners=True)`; a size-1 dim sits at 0); out[b, i, j] = transform[b] @ (x_j, y_i, 1).

    Args:
        transform: Float [n, 2, 3].
        dims: (n, c, h, w) of the image to sample (c is not used).

    Shapes: -> [n, h, w, 2], the last dim (x, y): what `Tensor.grid_sample_2d` takes.
    """
    from ._tensor import Tensor

    op = "affine_grid_2d"
    if not isinstance(transform, Tensor):
        raise TensorCheckError(op, f"transform must be a Tensor, got {type(transform).__name__}")
    check.float_(op, transform)
    dims = tuple(dims)
    if len(dims) != 4 or any(not isinstance(d, int) or d < 1 for d in dims):
        raise TensorCheckError(op, f"dims must be 4 positive ints (n, c, h, w), got {dims}")
    if tuple(transform._p.shape) != (dims[0], 2, 3):
        raise TensorCheckError(
            op, f"transform must have shape [{dims[0]}, 2, 3], got {list(transform._p.shape)}"
        )
    return transform._like(transform._o.affine_grid_2d(transform._p, dims))
