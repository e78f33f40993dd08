"""Resampling ops (Resize, Upsample)."""

from __future__ import annotations

from ._registry import op

RESIZE_ATTRS = ("antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a",
                "exclude_outside", "extrapolation_value", "keep_aspect_ratio_policy", "mode",
                "nearest_mode")
