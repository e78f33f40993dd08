"""`TrainingInterrupter`: a thread-safe stop flag checked after every step."""

from __future__ import annotations

import signal
import threading
from typing import Any


class TrainingInterrupter:
    """Ask a running `fit` to stop at the next step boundary (Burn's `Interrupter`).

    The dashboard's `q`, Ctrl-C and user code (another thread, a callback) all call `stop()`.
    The loop finishes the step it is in, skips the rest of the epoch and returns the model;
    checkpoints already being written complete first.

    Example:
        >>> i = TrainingInterrupter()
        >>> i.should_stop()
        False
        >>> i.stop("enough"); i.should_stop(), i.get_message()
        (True, 'enough')
        >>> i.reset(); i.should_stop()
        False
    """

    def __init__(self) -> None:
        self._flag = threading.Event()
        self._message: str | None = None

    @classmethod
    def new(cls) -> TrainingInterrupter:
        return cls()

    def stop(self, reason: str | None = None) -> None:
        self._message = reason
        self._flag.set()

    def reset(self) -> None:
        self._message = None
        self._flag.clear()

    def should_stop(self) -> bool:
        return self._flag.is_set()

    def get_message(self) -> str | None:
        return self._message


Interrupter = TrainingInterrupter  # the name of later Burn versions


class SigintHandler:
    """While active, the first Ctrl-C stops training gracefully; a second one aborts
    (KeyboardInterrupt) for a loop stuck inside a step. No-op outside the main thread."""

    def __init__(self, interrupter: TrainingInterrupter) -> None:
        self.interrupter = interrupter
        self._previous: Any = None
        self._installed = False

    def _handle(self, signum: int, frame: Any) -> None:
        if self.interrupter.should_stop():
            raise KeyboardInterrupt
        self.interrupter.stop("interrupted (Ctrl-C)")

    def __enter__(self) -> SigintHandler:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
