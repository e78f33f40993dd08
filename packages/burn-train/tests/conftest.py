"""Makes the shared test helpers (`real_parts`) importable (pytest runs in importlib mode: no
sys.path entry)."""

import sys
from pathlib import Path

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
