"""`TuiMetricsRenderer`: the live terminal dashboard (rich).

Shows epoch/iteration progress with ETA, the current value of every metric for train and valid,
and a braille plot of one numeric metric at a time (train and valid curves). Keys: left/right
select the metric, up/down switch between the recent (last epoch) and full-history views,
`q` stops training gracefully through the interrupter (Ctrl-C does too, via the learner).
"""

from __future__ import annotations

import sys
import threading
import time
from datetime import timedelta
from typing import IO, Any

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from ._base import MetricsRenderer, MetricState, TrainingProgress
from ._keys import KeyReader
from ._plot import Series, braille_plot

VIEWS = ("recent", "full history")


class TuiMetricsRenderer(MetricsRenderer):
    """Live dashboard; see the module docstring.

    Args:
        console: a rich Console (defaults to one on stdout).
        refresh_per_second: maximal redraw rate; key presses redraw at once.
        read_keys: read arrow keys and `q` from stdin (when it is a terminal).
        screen: draw on the terminal's alternate screen (restored on exit).
    """

    def __init__(
        self,
        console: Console | None = None,
        refresh_per_second: float = 8.0,
        read_keys: bool = True,
        screen: bool = True,
        stream: IO[str] | None = None,
    ) -> None:
        self.console = console or Console(file=stream or sys.stdout)
        self.min_interval = 1.0 / refresh_per_second
        self.read_keys = read_keys
        self.screen = screen
        self.texts: dict[str, dict[str, str]] = {"train": {}, "valid": {}, "test": {}}
        self.points: dict[str, dict[str, list[tuple[float, float]]]] = {}  # name -> split -> pts
        self.selected = 0
        self.view = 0
        self.progress: dict[str, TrainingProgress | None] = {
            "train": None,
            "valid": None,
            "test": None,
        }
        self.phase = "train"
        self.start_time = time.monotonic()
        self.epoch_start = {k: time.monotonic() for k in ("train", "valid", "test")}
        self.interrupter: Any = None
        self.status = ""
        self._pending: dict[str, list[tuple[str, float]]] = {"train": [], "valid": [], "test": []}
        self._lock = threading.RLock()
        self._last_draw = 0.0
        self._live: Live | None = None
        self._keys: KeyReader | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self, interrupter: Any) -> None:
        self.interrupter = interrupter
        self.start_time = time.monotonic()
        self._live = Live(
            console=self.console, auto_refresh=False, screen=self.screen, transient=not self.screen
        )
        self._live.start()
        if self.read_keys:
            self._keys = KeyReader(self.on_key)
            self._keys.start()
        self.draw(force=True)

    def close(self) -> None:
        if self._keys is not None:
            self._keys.stop()
            self._keys = None
        if self._live is not None:
            self.draw(force=True)
            self._live.stop()
            self._live = None

    def on_train_end(self, summary: Any = None) -> None:
        self.close()
        if summary is not None:
            self.console.print(str(summary), highlight=False, markup=False)

    # -- input ---------------------------------------------------------------------------------
    def on_key(self, key: str) -> None:
        with self._lock:
            n = max(len(self.points), 1)
            if key == "right":
                self.selected = (self.selected + 1) % n
            elif key == "left":
                self.selected = (self.selected - 1) % n
            elif key in ("up", "down"):
                self.view = (self.view + 1) % len(VIEWS)
            elif key in ("q", "Q") and self.interrupter is not None:
                self.interrupter.stop("stopped from the dashboard (q)")
            else:
                return
        self.draw(force=True)

    # -- metric updates ------------------------------------------------------------------------
    def _update(self, split: str, state: MetricState) -> None:
        with self._lock:
            self.texts[split][state.entry.name] = state.entry.formatted
            if state.numeric:
                # The x position is known only when the iteration's progress is rendered.
                self._pending[split].append((state.entry.name, float(state.value)))

    @staticmethod
    def _x(p: TrainingProgress) -> float:
        # Epoch-relative position so train and valid curves share the x axis.
        frac = p.progress.items_processed / max(p.progress.items_total, 1)
        return (p.epoch - 1) + frac

    def update_train(self, state: MetricState) -> None:
        self._update("train", state)

    def update_valid(self, state: MetricState) -> None:
        self._update("valid", state)

    def update_test(self, name: Any, state: MetricState) -> None:
        # Test values are shown in their own column; they are not plotted (no epoch axis).
        with self._lock:
            self.texts["test"][f"{state.entry.name}"] = state.entry.formatted

    def render_test(self, item: Any) -> None:
        with self._lock:
            if item.iteration <= 1:
                self.epoch_start["test"] = time.monotonic()
            self.phase = "test"
            self.progress["test"] = TrainingProgress(item.progress, 1, 1, item.iteration)
        self.draw()

    def render_train(self, item: TrainingProgress) -> None:
        self._render("train", item)

    def render_valid(self, item: TrainingProgress) -> None:
        self._render("valid", item)

    def _render(self, split: str, item: TrainingProgress) -> None:
        with self._lock:
            if item.iteration <= 1:
                self.epoch_start[split] = time.monotonic()
            self.phase = split
            self.progress[split] = item
            x = self._x(item)
            for name, value in self._pending[split]:
                self.points.setdefault(name, {"train": [], "valid": []})[split].append((x, value))
            self._pending[split].clear()
        self.draw()

    def end_epoch(self, split: Any, epoch: int) -> None:
        self.draw(force=True)

    # -- drawing -------------------------------------------------------------------------------
    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._live is None or (not force and now - self._last_draw < self.min_interval):
            return
        with self._lock:
            self._last_draw = now
            self._live.update(self.renderable(), refresh=True)

    def renderable(self) -> Any:
        with self._lock:
            width = self.console.size.width
            height = self.console.size.height
            rows = len({*self.texts["train"], *self.texts["valid"], *self.texts["test"]})
            # progress panel 4-5, table header 2 + rows, plot borders/tabs/legend 4, help 1
            plot_h = max(height - 13 - rows, 4)
            return Group(
                self._progress_panel(),
                self._metrics_table(),
                self._plot_panel(width, plot_h),
                self._help(),
            )

    def _progress_panel(self) -> Panel:
        p = self.progress[self.phase]
        if p is None:
            return Panel(Text("starting..."), title="burn-train")
        done, total = p.progress.items_processed, max(p.progress.items_total, 1)
        elapsed = time.monotonic() - self.epoch_start[self.phase]
        eta_epoch = elapsed * (total - done) / done if done else 0.0
        tp = p if self.phase == "test" else (self.progress["train"] or p)
        frac = (
            (tp.epoch - 1) + tp.progress.items_processed / max(tp.progress.items_total, 1)
        ) / max(tp.epoch_total, 1)
        run = time.monotonic() - self.start_time
        eta_total = run * (1 - frac) / frac if frac > 0 else 0.0
        head = Text.assemble(
            (f"{self.phase.capitalize()} ", "bold"),
            f"epoch {p.epoch}/{p.epoch_total}  iteration {p.iteration}  items {done}/{total}  ",
            (f"ETA epoch {_td(eta_epoch)}  ETA total {_td(eta_total)}", "cyan"),
        )
        bar = ProgressBar(total=total, completed=done, width=max(self.console.size.width - 6, 10))
        parts: list[Any] = [head, bar]
        if self.interrupter is not None and self.interrupter.should_stop():
            parts.append(
                Text(
                    "Stopping: finishing the current step, then returning the model...",
                    "bold yellow",
                )
            )
        return Panel(Group(*parts), title="burn-train")

    def _metrics_table(self) -> Table:
        table = Table(expand=True, title=None, show_edge=False, pad_edge=False)
        table.add_column("Metric", style="bold")
        table.add_column("Train", style="blue")
        table.add_column("Valid", style="red")
        splits = ["train", "valid"] + (["test"] if self.texts["test"] else [])
        if self.texts["test"]:
            table.add_column("Test", style="green")
        names = list(dict.fromkeys(n for s in splits for n in self.texts[s]))
        for name in names:
            table.add_row(name, *(self.texts[s].get(name, "-") for s in splits))
        return table

    def _plot_panel(self, width: int, height: int) -> Panel:
        names = list(self.points)
        if not names:
            return Panel(
                Text("no numeric metric registered", style="dim"), title="Plots", height=height + 2
            )
        self.selected %= len(names)
        name = names[self.selected]
        data = self.points[name]
        series = [Series("train", "blue", data["train"]), Series("valid", "red", data["valid"])]
        if VIEWS[self.view] == "recent":
            last = max((x for s in series for x, _ in s.points), default=0.0)
            for s in series:
                s.points = [(x, y) for x, y in s.points if x >= last - 1.0]
        plot = braille_plot(series, width - 4, height)
        tabs = Text(" ").join(
            Text(f" {n} ", style="reverse bold" if i == self.selected else "")
            for i, n in enumerate(names)
        )
        legend = Text.assemble(
            ("━ train ", "blue"), ("━ valid", "red"), f"   view: {VIEWS[self.view]}"
        )
        return Panel(Group(tabs, plot, legend), title=f"Plot: {name} ({VIEWS[self.view]})")

    @staticmethod
    def _help() -> Text:
        return Text("←/→ metric   ↑/↓ recent/full history   q quit (graceful)", style="dim")


def _td(seconds: float) -> str:
    return str(timedelta(seconds=int(max(seconds, 0))))
