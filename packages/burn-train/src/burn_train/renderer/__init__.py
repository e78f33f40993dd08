"""Renderers (Burn's `burn::train::renderer`): the live dashboard and plain progress lines.

`default_renderer()` picks the dashboard when stdout is a terminal, plain lines otherwise.

Example:
    >>> import io
    >>> from burn_train.renderer import CliMetricsRenderer, TrainingProgress
    >>> from burn_train.metric import MetricMetadata
    >>> out = io.StringIO()
    >>> r = CliMetricsRenderer(out, interval=0)
    >>> r.render_train(TrainingProgress(MetricMetadata.fake().progress, 1, 2, 1))
    >>> out.getvalue()
    '[train] epoch 1/2 iter 1 | 1/1 items (100%)\\n'
"""

import sys

from ._base import (
    EvaluationName,
    EvaluationProgress,
    MetricsRenderer,
    MetricState,
    TrainingProgress,
)
from ._cli import CliMetricsRenderer
from ._plot import Series, braille_plot
from ._tui import TuiMetricsRenderer


def default_renderer() -> MetricsRenderer:
    """The dashboard on a terminal, `CliMetricsRenderer` when stdout is a pipe or a file."""
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    return TuiMetricsRenderer() if tty else CliMetricsRenderer()


__all__ = [
    "CliMetricsRenderer",
    "EvaluationName",
    "EvaluationProgress",
    "MetricState",
    "MetricsRenderer",
    "Series",
    "TrainingProgress",
    "TuiMetricsRenderer",
    "braille_plot",
    "default_renderer",
]
