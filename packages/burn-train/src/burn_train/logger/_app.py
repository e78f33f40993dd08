"""The application log, `<artifact_dir>/experiment.log` (Burn writes it through `tracing`)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

LOGGER_NAME = "burn_train"


def install_application_logger(path: str | os.PathLike) -> logging.Handler:
    """Send the `burn_train` logger (INFO and up) to `path`; returns the handler to remove.

    Example:
        >>> import tempfile, logging
        >>> p = tempfile.mkdtemp() + "/experiment.log"
        >>> h = install_application_logger(p)
        >>> logging.getLogger("burn_train").info("hello")
        >>> remove_application_logger(h)
        >>> from pathlib import Path
        >>> Path(p).read_text().strip().endswith("hello")
        True
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    # The dashboard owns the terminal: log records must not reach stderr through the root logger.
    logger.propagate = False
    return handler


def remove_application_logger(handler: logging.Handler) -> None:
    logging.getLogger(LOGGER_NAME).removeHandler(handler)
    handler.close()
