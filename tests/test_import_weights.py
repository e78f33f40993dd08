"""import-weights example: PyTorch's digits model, loaded from .pt and .safetensors into burn-py,
predicts exactly what PyTorch predicted on the same 360 test digits. No torch is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest
from burn_ndarray import NdArray
from import_weights import WEIGHTS, evaluate, torch_result


@pytest.mark.parametrize("name", ["digits_net.pt", "digits_net.safetensors"])
def test_same_predictions_as_pytorch(name):
    reference = torch_result()
    result = evaluate(WEIGHTS / name, NdArray().device())
    assert result.total == reference["total"] == 360
    assert result.predictions == reference["predictions"]  # item by item
    assert result.correct == reference["correct"] and result.accuracy == reference["accuracy"]
    assert result.accuracy > 95.0


def test_cli_runs_without_torch():
    # A meta-path hook makes `import torch` fail in the child: the example must not need it.
    script = (
        "import sys\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch is blocked in this test')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        "from import_weights.cli import main\n"
        "sys.exit(main([]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("PyTorch 2.13.0") and "on the digits test split" in lines[0]
    assert sum("same predictions as PyTorch" in line for line in lines) == 2


def test_committed_weights_are_small():
    sizes = [p.stat().st_size for p in WEIGHTS.iterdir()]
    assert sum(sizes) < 500_000
