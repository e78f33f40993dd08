"""The dashboard in a real terminal: a short training runs under tmux (detached session, fixed
110x40 window), the pane is captured (progress bar, metric values, plot), arrow keys change the
view, `q` stops it, the process exits 0 and its checkpoints load.

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

import burn_train_toy as toy
import numpy as np
import pytest
from burn_record import NamedMpkFileRecorder

HERE = Path(__file__).parent
CHILD = str(HERE / "tmux_child.py")
CAPTURE = HERE / "data" / "dashboard_capture.txt"
BRAILLE = re.compile("[\u2801-\u28ff]")
WIDTH, HEIGHT = 110, 40

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
            timeout=10,
        )

    def capture(self) -> str:
        out = self.tmux("capture-pane", "-p", "-t", self.target).stdout
        return "\n".join(line.rstrip() for line in out.splitlines()).strip("\n") + "\n"

    def wait_for(self, predicate, what, timeout=20.0) -> str:
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


def _train_epoch(screen):
    m = re.search(r"Train epoch (\d+)/40", screen)
    return int(m.group(1)) if m else 0


def _full_frame(screen):
    # a whole frame is on the pane (not one caught mid-redraw): header to help line
    return "burn-train" in screen and "q quit (graceful)" in screen and "━ train" in screen


@needs_tmux
def test_dashboard_under_tmux_keys_q_and_checkpoints(tmp_path):
    exit_file = tmp_path / "exit_code"
    command = (
        shlex.join([sys.executable, CHILD, str(tmp_path)])
        + f"; echo $? > {shlex.quote(str(exit_file))}"
    )
    term = Tmux(command)
    try:
        # mid-run, from epoch 3 on (a valid curve to plot): progress, values, plot
        screen = term.wait_for(
            lambda s: _full_frame(s) and _train_epoch(s) >= 3 and "Plot: Accuracy (recent)" in s,
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

        # q: graceful stop, fit returns, the process exits 0
        term.send("q")
        deadline = time.monotonic() + 20
        while not exit_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert exit_file.exists(), f"the process did not exit; pane:\n{term.capture()}"
        time.sleep(0.1)  # the shell's echo has finished writing
        final = term.capture()
    finally:
        term.kill()
    assert exit_file.read_text().strip() == "0", final
    returned = (tmp_path / "returned.txt").read_text()
    m = re.fullmatch(r"completed=(\d+) interrupted=True model=ToyClassifier\n", returned)
    assert m, returned
    completed = int(m.group(1))
    assert 3 <= completed < 40
    assert "RETURNED completed" in final and "| Valid | Loss" in final  # summary after the TUI
    assert "stopped from the dashboard (q)" in (tmp_path / "experiment.log").read_text()

    # the checkpoint of the last completed epoch is written, and every checkpoint file loads
    ckpt = tmp_path / "checkpoint"
    names = sorted(p.name for p in ckpt.iterdir())
    assert {f"{k}-{completed}.mpk" for k in ("model", "optim", "scheduler")} <= set(names)
    assert not any(n.endswith(".tmp") or n.startswith(".") for n in names)
    recorder = NamedMpkFileRecorder()
    for path in ckpt.iterdir():
        assert recorder.load(path) is not None, path
    proto = toy.ToyClassifier.init()
    model = proto.load_record(recorder.load(ckpt / f"model-{completed}.mpk"))
    optim = toy.MomentumSgd().load_record(recorder.load(ckpt / f"optim-{completed}.mpk"))
    sched = toy.StepLr(0.5).load_record(recorder.load(ckpt / f"scheduler-{completed}.mpk"))
    assert optim.steps == 6 * completed and sched.iteration == 6 * completed
    assert not np.array_equal(model.params()["weight"], proto.params()["weight"])
    assert all(np.isfinite(v).all() for v in model.params().values())


def test_committed_capture_shows_the_dashboard():
    """The screenshot-like capture kept with the tests (regenerate: BURN_TRAIN_UPDATE_CAPTURE=1)."""
    screen = CAPTURE.read_text()
    assert re.search(r"epoch \d+/40  iteration \d+  items \d+/\d+  ETA epoch", screen)
    assert re.search(r"Accuracy\s+│ epoch [\d.]+ %", screen)
    assert "Plot: Accuracy (recent)" in screen and len(BRAILLE.findall(screen)) > 50
