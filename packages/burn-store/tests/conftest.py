"""Makes the shared test model (`_net`) importable (pytest runs in importlib mode)."""

import sys
from pathlib import Path

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
