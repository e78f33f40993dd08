"""`python -m xor ...`: the same as the console script."""

import sys

from .cli import main

sys.exit(main())
