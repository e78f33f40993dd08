"""Fixtures of the burn-autodiff tests; puts this directory on sys.path for the helper modules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _autodiff_testlib import F64
from burn_autodiff import Autodiff, BalancedCheckpointing


@pytest.fixture(params=["none", "balanced"])
def ad64(request):
    """Autodiff over float64 NdArray, with each checkpointing strategy."""
    if request.param == "balanced":
        return Autodiff(F64, checkpointing=BalancedCheckpointing())
    return Autodiff(F64)
