"""The dashboard under a pseudo-terminal: plots, values, arrow keys, `q` and Ctrl-C; plain
lines when stdout is a pipe. The child trains the real parts (`real_parts`).

No timing assumption: the child holds at a fixed (epoch, iteration) until `q` or Ctrl-C stops it
(`HoldUntilStopped`), the test waits for that before pressing keys, and a key press redraws the
whole dashboard; every wait is bounded by PATIENCE, reached only when something is broken."""

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

CHILD = str(Path(__file__).with_name("tui_child.py"))
ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
BRAILLE = re.compile("[\u2801-\u28ff]")

PATIENCE = 300.0  # seconds
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")


class Term:
    """A child process on a 110x40 pseudo-terminal; `screen` is all output, ANSI-stripped."""

    def __init__(self, tmp_path, **env):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 110, 0, 0))
        child_env = {
            **os.environ,
            "TERM": "xterm-256color",
            "BURN_TRAIN_TTY": os.ttyname(slave),
            "COLUMNS": "110",
            "LINES": "40",
            **env,
        }
        child_env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen(
            [sys.executable, CHILD, str(tmp_path)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=child_env,
            start_new_session=True,
        )
        os.close(slave)
        self.raw = b""

    def pump(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # child closed the terminal
                    return
                if not data:
                    return
                self.raw += data

    @property
    def screen(self):
        return ANSI.sub(b"", self.raw).decode("utf-8", "replace")

    def wait_for(self, pattern, timeout=PATIENCE, since=0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if re.search(pattern, self.screen[since:]):
                return True
            if self.proc.poll() is not None:
                self.pump(0.2)
                return bool(re.search(pattern, self.screen[since:]))
            self.pump(0.1)
        raise AssertionError(f"{pattern!r} never appeared; screen tail:\n{self.screen[-3000:]}")

    def wait_file(self, path, timeout=PATIENCE):
        """Pump the output until `path` exists (the child writes it, then holds)."""
        end = time.monotonic() + timeout
        while not path.exists() and self.proc.poll() is None and time.monotonic() < end:
            self.pump(0.1)
        if not path.exists():
            raise AssertionError(f"{path.name} never written; screen tail:\n{self.screen[-3000:]}")

    def send(self, data):
        os.write(self.master, data)

    def finish(self, timeout=PATIENCE):
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            self.pump(0.1)
        self.pump(0.3)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"child did not exit; screen tail:\n{self.screen[-3000:]}")
        os.close(self.master)
        return self.proc.returncode


def test_dashboard_plots_values_keys_and_q(tmp_path):
    term = Term(tmp_path)  # holds at epoch 4 iteration 2: 3 epochs of values and curves
    try:
        term.wait_file(tmp_path / "holding")
        term.wait_for(r"Plot: Accuracy \(recent\)")
        # right arrow: next metric; the whole dashboard is redrawn at once (header to help line)
        mark = len(term.screen)
        term.send(b"\x1b[C")
        term.wait_for(r"Plot: Loss \(recent\)[\s\S]*q quit \(graceful\)", since=mark)
        screen = term.screen[mark:]
        # progress with ETA, metric values for both splits, and a braille plot
        assert re.search(r"Train\s+epoch 4/30\s+iteration 1\s+items 16/96\s+ETA epoch", screen)
        assert re.search(
            r"Accuracy\s+│ epoch [\d.]+ % - batch [\d.]+ %\s+│ epoch [\d.]+ % - batch", screen
        )
        assert re.search(r"Loss\s+│ epoch [\d.]+ - batch [\d.]+\s+│ epoch [\d.]+ - batch", screen)
        assert "CPU Usage" in screen and "━ train" in screen and "━ valid" in screen
        assert len(BRAILLE.findall(screen)) > 50, "no plot drawn"
        # up arrow: full history; left arrow: back to the first metric
        mark = len(term.screen)
        term.send(b"\x1b[A")
        term.wait_for(r"Plot: Loss \(full history\)", since=mark)
        term.send(b"\x1b[D")
        term.wait_for(r"Plot: Accuracy \(full history\)", since=mark)
        # q stops gracefully: the model is returned and the summary printed
        term.send(b"q")
        assert term.finish() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    screen = term.screen
    assert "Learner Summary" in screen
    assert "RETURNED completed=3 interrupted=True model=Mlp" in screen
    log = (tmp_path / "experiment.log").read_text()
    assert "Training interrupted at epoch 4 iteration 2: stopped from the dashboard (q)" in log


def test_ctrl_c_on_the_terminal_stops_gracefully(tmp_path):
    term = Term(tmp_path, BURN_TRAIN_HOLD="2,2")
    try:
        term.wait_file(tmp_path / "holding")
        term.send(b"\x03")  # the terminal turns this into SIGINT for the child
        assert term.finish() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert "RETURNED completed=1 interrupted=True model=Mlp" in term.screen
    log = (tmp_path / "experiment.log").read_text()
    assert "Training interrupted at epoch 2 iteration 2: interrupted (Ctrl-C)" in log


def test_plain_lines_when_stdout_is_not_a_terminal(tmp_path):
    env = {**os.environ, "BURN_TRAIN_EPOCHS": "2", "BURN_TRAIN_HOLD": ""}
    env.pop("BURN_TRAIN_TTY", None)
    out = subprocess.run(
        [sys.executable, CHILD, str(tmp_path)],
        capture_output=True,
        env=env,
        timeout=PATIENCE,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    text = out.stdout.decode()
    assert out.returncode == 0, out.stderr.decode()
    assert "\x1b" not in text
    assert "[train] epoch 2/2 iter 6 | 96/96 items (100%) | Accuracy: epoch" in text
    assert "[valid] epoch 2/2 iter 3 | 48/48 items (100%)" in text
    assert "Learner Summary" in text and "RETURNED completed=2 interrupted=False" in text
