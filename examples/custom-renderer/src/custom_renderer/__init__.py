"""Burn's custom-renderer example: a `MetricsRenderer` of your own receives every training,
validation and test progress update instead of the dashboard."""

from .renderer import CustomRenderer, run

__all__ = ["CustomRenderer", "run"]
