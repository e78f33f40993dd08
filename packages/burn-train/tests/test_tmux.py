"""The dashboard in a real terminal: a short training of the real parts (`real_parts`: burn_nn MLP
on `Autodiff(NdArray())`, Adam, StepLr) runs under tmux (detached session, fixed 110x40 window),
the pane is captured (progress bar, metric values, plot), arrow keys change the view, `q` stops
it, the process exits 0 and its checkpoints load.

No timing assumption: the child holds at epoch 4 iteration 2 (`HoldUntilStopped`) until `q`, so
exactly 3 epochs are complete when it stops however loaded the machine is; every wait is on the
condition asserted next, with a generous bound that only a broken run reaches.

Set BURN_TRAIN_UPDATE_CAPTURE=1 to rewrite `tests/data/dashboard_capture.txt` from this run.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
import real_parts as parts
from burn_optim import AdamConfig
from burn_record import NamedMpkFileRecorder

HERE = Path(__file__).parent
CHILD = str(HERE / "tmux_child.py")
CAPTURE = HERE / "data" / "dashboard_capture.txt"
BRAILLE = re.compile("[\u2801-\u28ff]")
WIDTH, HEIGHT = 110, 40
PATIENCE = 300.0  # seconds: a bound for every wait, reached only when something is broken

TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(
    TMUX is None,
    reason="tmux is not installed: the real-terminal dashboard test needs it "
    "(apt-get install tmux; .ci/run installs it)",
)


class Tmux:
    """A private tmux server (own socket) running one command in a detached session."""

    def __init__(self, command: str):
        self.socket = f"burn-train-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.target = "dash"
        env = {**os.environ, "TERM": "xterm-256color"}
        env.pop("TMUX", None)  # works from inside a tmux session too
        env.pop("NO_COLOR", None)
        # The pane's size must decide the dashboard's: a pytest-xdist worker has COLUMNS=80 and
        # LINES=24 in its environment (GNU readline, imported there, sets them), which rich
        # would take over the 110x40 window (the header then wrapped in an 80-column frame).
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        self.socket_path = ""
        try:
            self._start(command, env)
        except BaseException:
            self.kill()
            raise

    def _start(self, command, env):
        self.tmux(
            "new-session", "-d", "-s", self.target, "-x", str(WIDTH), "-y", str(HEIGHT),
            command, ";", "set-option", "-t", self.target, "remain-on-exit", "on",
            env=env,
        )  # fmt: skip
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").stdout.strip()

    def tmux(self, *args, env=None, check=True):
        return subprocess.run(
            [TMUX, "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=env,
            check=check,
            timeout=PATIENCE,
        )

    def capture(self) -> str:
        out = self.tmux("capture-pane", "-p", "-t", self.target).stdout
        return "\n".join(line.rstrip() for line in out.splitlines()).strip("\n") + "\n"

    def wait_for(self, predicate, what, timeout=PATIENCE) -> str:
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = self.capture()
            if predicate(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{what} never appeared; pane:\n{screen}")

    def send(self, *keys):
        self.tmux("send-keys", "-t", self.target, *keys)

    def kill(self):
        self.tmux("kill-server", check=False)
        if self.socket_path:
            Path(self.socket_path).unlink(missing_ok=True)


def _epoch(screen):
    m = re.search(r"(?:Train|Valid) epoch (\d+)/40", screen)
    return int(m.group(1)) if m else 0


def _full_frame(screen):
    # a whole frame is on the pane (not one caught mid-redraw): header to help line
    return "burn-train" in screen and "q quit (graceful)" in screen and "━ train" in screen


def _wait_file(path, term, exit_file, what):
    """Wait until `path` exists with content (or the child exited: fail at once)."""
    end = time.monotonic() + PATIENCE
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        if path != exit_file and exit_file.exists():
            break
        time.sleep(0.05)
    raise AssertionError(f"{what}; pane:\n{term.capture()}")


@needs_tmux
def test_dashboard_under_tmux_keys_q_and_checkpoints(tmp_path):
    exit_file = tmp_path / "exit_code"
    command = (
        shlex.join([sys.executable, CHILD, str(tmp_path)])
        + f"; echo $? > {shlex.quote(str(exit_file))}"
    )
    term = Tmux(command)
    try:
        # the child holds at epoch 4 iteration 2 until `q`: 3 epochs done, a curve to plot
        _wait_file(tmp_path / "holding", term, exit_file, "training never reached epoch 4")
        screen = term.wait_for(
            lambda s: _full_frame(s) and _epoch(s) >= 3 and "Plot: Accuracy (recent)" in s,
            "the dashboard at epoch >= 3",
        )
        lines = screen.splitlines()
        assert len(lines) <= HEIGHT and max(map(len, lines)) <= WIDTH  # the fixed window
        # progress: header with ETAs and a bar (a run of rich's bar glyphs in the top panel)
        assert re.search(
            r"(Train|Valid) epoch \d+/40  iteration \d+  items \d+/(96|48)  "
            r"ETA epoch \d+:\d\d:\d\d  ETA total \d+:\d\d:\d\d",
            screen,
        )
        panel = screen.split("Metric", 1)[0]
        assert re.search("[━╸╺]{20,}", panel), "no progress bar"
        # metric values for train and valid
        num = r"[\d.]+"
        acc = rf"Accuracy\s+│ epoch {num} % - batch {num} %\s+│ epoch {num} % - batch {num} %"
        assert re.search(acc, screen)
        assert re.search(rf"Loss\s+│ epoch {num} - batch {num}\s+│ epoch {num} - batch", screen)
        assert re.search(r"Learning Rate\s+│ epoch [\d.e+-]+ - batch [\d.e+-]+\s+│ -", screen)
        # the plot: braille curves on a y axis, train/valid legend
        plot = screen.split("Plot: Accuracy (recent)", 1)[1]
        assert len(BRAILLE.findall(plot)) > 50, "no plot drawn"
        assert re.search(r"\d+┤", plot) and "━ train ━ valid   view: recent" in plot
        (tmp_path / "capture.txt").write_text(screen)
        if os.environ.get("BURN_TRAIN_UPDATE_CAPTURE"):
            CAPTURE.write_text(screen)

        # → : next metric (Loss); ↑ : full history; the pane changes accordingly
        term.send("Right")
        after_right = term.wait_for(
            lambda s: _full_frame(s) and "Plot: Loss (recent)" in s, "Plot: Loss (recent)"
        )
        assert "Plot: Accuracy" not in after_right
        term.send("Up")
        after_up = term.wait_for(
            lambda s: _full_frame(s) and "Plot: Loss (full history)" in s,
            "Plot: Loss (full history)",
        )
        assert "view: full history" in after_up

        # q: graceful stop, fit returns, the process exits 0 (its status is written last)
        term.send("q")
        status = _wait_file(exit_file, term, exit_file, "the process did not exit")
        final = term.wait_for(lambda s: "RETURNED completed" in s, "the returned line")
    finally:
        term.kill()
    assert status == "0", final
    returned = (tmp_path / "returned.txt").read_text()
    assert returned == "completed=3 interrupted=True model=Mlp\n", returned
    assert "| Valid | Loss" in final  # summary after the TUI
    log = (tmp_path / "experiment.log").read_text()
    assert "Training interrupted at epoch 4 iteration 2: stopped from the dashboard (q)" in log

    # the checkpoint of the last completed epoch is written, and every checkpoint file loads
    ckpt = tmp_path / "checkpoint"
    names = sorted(p.name for p in ckpt.iterdir())
    assert {f"{k}-3.mpk" for k in ("model", "optim", "scheduler")} <= set(names)
    assert not any(n.endswith(".tmp") or n.startswith(".") for n in names)
    recorder = NamedMpkFileRecorder()
    assert "complete-3.json" in names  # the unit's marker, written last
    for path in ckpt.glob("*.mpk"):
        assert recorder.load(path) is not None, path
    proto = parts.init_model()
    model = proto.load_record(recorder.load(ckpt / "model-3.mpk", target=proto.into_record()))
    optim = AdamConfig().init().load_record(recorder.load(ckpt / "optim-3.mpk"))
    sched = parts.scheduler()
    sched = sched.load_record(recorder.load(ckpt / "scheduler-3.mpk")) or sched
    # 3 epochs x 6 iterations: Adam's step count, the scheduler's index (-1 before any step)
    assert parts.adam_steps(optim) == 18 and sched.iter_idx == 17
    trained, initial = parts.params(model), parts.params(proto)
    assert trained.keys() == initial.keys() and len(trained) == 4
    for key, value in trained.items():
        assert np.isfinite(value).all() and not np.array_equal(value, initial[key]), key


def test_committed_capture_shows_the_dashboard():
    """The screenshot-like capture kept with the tests (regenerate: BURN_TRAIN_UPDATE_CAPTURE=1)."""
    screen = CAPTURE.read_text()
    assert re.search(r"epoch \d+/40  iteration \d+  items \d+/\d+  ETA epoch", screen)
    assert re.search(r"Accuracy\s+│ epoch [\d.]+ %", screen)
    assert "Plot: Accuracy (recent)" in screen and len(BRAILLE.findall(screen)) > 50
