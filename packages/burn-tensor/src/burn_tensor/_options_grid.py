"""Option records of the grid family (Burn's `GridSampleOptions`, `GridOptions`, ...).

Modes are strings (as `InterpolateOptions.mode`); the classes with Burn's variant names
(`GridSamplePaddingMode.Zeros`, `GridIndexing.Cartesian`, ...) hold those strings so Burn code
reads the same.
"""

from __future__ import annotations

from dataclasses import dataclass


class GridSamplePaddingMode:
    """Where `grid_sample_2d` reads outside the input: "zeros" (0), "border" (nearest edge
    value) or "reflection" (mirrored at the border, then clamped), as torch's `padding_mode`."""

    Zeros = "zeros"
    Border = "border"
    Reflection = "reflection"


GRID_SAMPLE_MODES = ("bilinear", "nearest")
GRID_SAMPLE_PADDING_MODES = ("zeros", "border", "reflection")


@dataclass(frozen=True)
class GridSampleOptions:
    """Options of `grid_sample_2d` (Burn's `GridSampleOptions`; torch's `F.grid_sample`).

    Args:
        mode: "bilinear" (default) or "nearest" (round half to even, as torch).
        padding_mode: "zeros" (default), "border" or "reflection".
        align_corners: True: -1 and 1 are the centers of the corner pixels; False (default):
            the outer edges of the corner pixels.

    Example:
        >>> GridSampleOptions("nearest").padding_mode
        'zeros'
    """

    mode: str = "bilinear"
    padding_mode: str = GridSamplePaddingMode.Zeros
    align_corners: bool = False

    def __post_init__(self) -> None:
        if self.mode not in GRID_SAMPLE_MODES:
            raise ValueError(
                f"GridSampleOptions: mode must be one of {GRID_SAMPLE_MODES}, got {self.mode!r}"
            )
        if self.padding_mode not in GRID_SAMPLE_PADDING_MODES:
            raise ValueError(
                "GridSampleOptions: padding_mode must be one of "
                f"{GRID_SAMPLE_PADDING_MODES}, got {self.padding_mode!r}"
            )
        if not isinstance(self.align_corners, bool):
            raise ValueError(
                f"GridSampleOptions: align_corners must be a bool, got {self.align_corners!r}"
            )

    def with_padding_mode(self, padding_mode: str) -> GridSampleOptions:
        return GridSampleOptions(self.mode, padding_mode, self.align_corners)

    def with_align_corners(self, align_corners: bool) -> GridSampleOptions:
        return GridSampleOptions(self.mode, self.padding_mode, align_corners)


class GridIndexing:
    """`meshgrid` indexing: "matrix" ("ij", default) or "cartesian" ("xy": dims 0 and 1 swap)."""

    Matrix = "matrix"
    Cartesian = "cartesian"


class GridSparsity:
    """`meshgrid` outputs: "dense" (the full grid shape, default) or "sparse" (size 1 off the
    coordinate's own dim)."""

    Dense = "dense"
    Sparse = "sparse"


class IndexPos:
    """Where `meshgrid_stack` puts the coordinate index: "first" (default) or "last"."""

    First = "first"
    Last = "last"


@dataclass(frozen=True)
class GridOptions:
    """`meshgrid` options (Burn's `GridOptions`): `indexing` and `sparsity`."""

    indexing: str = GridIndexing.Matrix
    sparsity: str = GridSparsity.Dense

    def __post_init__(self) -> None:
        if self.indexing not in (GridIndexing.Matrix, GridIndexing.Cartesian):
            raise ValueError(
                f"GridOptions: indexing must be 'matrix' or 'cartesian', got {self.indexing!r}"
            )
        if self.sparsity not in (GridSparsity.Dense, GridSparsity.Sparse):
            raise ValueError(
                f"GridOptions: sparsity must be 'dense' or 'sparse', got {self.sparsity!r}"
            )
