"""`python -m tutorial N|all`: the same as the console script."""

import sys

from .cli import main

sys.exit(main())
