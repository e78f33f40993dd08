"""Tensor methods of the grid family: `cartesian_grid` (static) and `grid_sample_2d`."""

from __future__ import annotations

from . import _check as check
from ._errors import TensorCheckError
from ._options_grid import GridSampleOptions


class GridMixin:
    @staticmethod
    def cartesian_grid(shape, device=None):
        """Int coordinates of every element of `shape` (Burn's `Tensor::cartesian_grid`).

        Shapes: [s0, .., s_{d-1}] -> [s0, .., s_{d-1}, d]; out[i0, .., i_{d-1}] = (i0, ..).

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> Tensor.cartesian_grid([2, 2], NdArray().device()).tolist()
            [[[0, 0], [0, 1]], [[1, 0], [1, 1]]]
        """
        from ._dtype import Int
        from ._tensor import Tensor
        from ._tensor_creation import device_or_default

        device = device_or_default(device)
        shape = tuple(shape)
        if not shape or any(not isinstance(s, int) or s < 0 for s in shape):
            raise TensorCheckError(
                "cartesian_grid", f"shape must be one or more non-negative ints, got {shape}"
            )
        p = device.backend.int_cartesian_grid(shape, device)
        return Tensor._make(p, Int, device)

    def grid_sample_2d(self, grid, options=None):
        """Sample this [n, c, h, w] Float tensor at `grid`'s positions (Burn's
        `grid_sample_2d`, torch's `F.grid_sample` in 2-D).

        Args:
            grid: Float [n, ho, wo, 2]; the last dim is (x, y) normalized to [-1, 1] (x along
                the width).
            options: `GridSampleOptions(mode, padding_mode, align_corners)`, or a mode name
                ("bilinear", "nearest"); default bilinear, zeros padding, align_corners=False.

        Shapes: [n, c, h, w] -> [n, c, ho, wo]. Differentiable in the input and the grid
        (nearest: zero gradient for the grid, as torch).

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> dev = NdArray().device()
            >>> x = Tensor.from_data([[[[1.0, 2.0], [3.0, 4.0]]]], dev)
            >>> g = Tensor.from_data([[[[0.0, 0.0]]]], dev)   # the center
            >>> x.grid_sample_2d(g).tolist()
            [[[[2.5]]]]
        """
        from ._tensor import Tensor

        op = "grid_sample_2d"
        if options is None:
            options = GridSampleOptions()
        elif isinstance(options, str):
            try:
                options = GridSampleOptions(options)
            except ValueError as e:
                raise TensorCheckError(op, str(e)) from None
        elif not isinstance(options, GridSampleOptions):
            raise TensorCheckError(
                op, f"options must be a GridSampleOptions or a mode name, got {options!r}"
            )
        check.float_(op, self)
        if not isinstance(grid, Tensor):
            raise TensorCheckError(op, f"grid must be a Tensor, got {type(grid).__name__}")
        problems = []
        sx, sg = self._p.shape, grid._p.shape
        if len(sx) != 4:
            problems.append(f"input must be [n, c, h, w], got {list(sx)}")
        if grid._o.kind is not self._o.kind:
            problems.append(f"grid must be Float, got {grid._o.kind.value}")
        if len(sg) != 4 or sg[3] != 2:
            problems.append(f"grid must be [n, ho, wo, 2], got {list(sg)}")
        elif len(sx) == 4 and sg[0] != sx[0]:
            problems.append(f"batch sizes differ: input {sx[0]}, grid {sg[0]}")
        if len(sx) == 4 and 0 in sx[2:]:
            problems.append(f"input has an empty spatial dim: {list(sx)}")
        if grid._d is not self._d:
            problems.append(check.device_mismatch(self, grid, ("input", "grid")))
        if problems:
            raise TensorCheckError(op, problems)
        return self._like(self._o.grid_sample_2d(self._p, grid._p, options))
