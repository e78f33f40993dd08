"""`_rank_main.bind_gpu`: each launched rank computes on its own GPU (cupy's current device is
`BURN_LOCAL_RANK % count`); without cupy or a GPU nothing is bound."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
from burn_train._rank_main import bind_gpu


def test_nothing_to_bind_without_cupy(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert bind_gpu() is None


def _gpus() -> int:
    if importlib.util.find_spec("cupy") is None:
        return 0
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no driver
        return 0


@pytest.mark.skipif(_gpus() < 1, reason="needs cupy and an NVIDIA GPU (the GPU machine)")
@pytest.mark.parametrize("local", [0, 1, 2])
def test_each_local_rank_gets_its_gpu(local):
    # A fresh process per case: the current device is per thread and sticks once set.
    code = (
        "import cupy; from burn_train._rank_main import bind_gpu; "
        "print(bind_gpu(), cupy.cuda.runtime.getDevice())"
    )
    env = {"BURN_LOCAL_RANK": str(local)}
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    want = local % _gpus()
    assert out.stdout.split() == [str(want), str(want)]
