"""Reading single key presses from a terminal in the background (arrows, `q`)."""

from __future__ import annotations

import os
import select
import sys
import threading
from collections.abc import Callable

KEYS = {b"\x1b[A": "up", b"\x1b[B": "down", b"\x1b[C": "right", b"\x1b[D": "left",
        b"\x1bOA": "up", b"\x1bOB": "down", b"\x1bOC": "right", b"\x1bOD": "left"}  # fmt: skip


def parse_keys(data: bytes) -> list[str]:
    """Split raw terminal input into key names: `up/down/left/right`, or the character.

    Example:
        >>> parse_keys(b"\\x1b[Cq")
        ['right', 'q']
    """
    keys, i = [], 0
    while i < len(data):
        seq = data[i : i + 3]
        if seq in KEYS:
            keys.append(KEYS[seq])
            i += 3
            continue
        keys.append(chr(data[i]) if data[i] < 128 else "?")
        i += 1
    return keys


class KeyReader:
    """Puts the terminal in cbreak mode (keys arrive unbuffered, Ctrl-C still raises SIGINT)
    and calls `on_key(name)` from a daemon thread until `stop()`."""

    def __init__(self, on_key: Callable[[str], None], fd: int | None = None) -> None:
        self.on_key = on_key
        self.fd = sys.stdin.fileno() if fd is None else fd
        self._saved = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        """Start reading; False when stdin is not a terminal (nothing to read)."""
        try:
            if not os.isatty(self.fd):
                return False
            import termios
            import tty

            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        except (OSError, ImportError, ValueError):
            return False
        self._thread = threading.Thread(target=self._run, name="burn-train-keys", daemon=True)
        self._thread.start()
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.05)
                if not ready:
                    continue
                data = os.read(self.fd, 64)
            except (OSError, ValueError):
                return
            if not data:
                return
            for key in parse_keys(data):
                self.on_key(key)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        if self._saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self._saved = None
