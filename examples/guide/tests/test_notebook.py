"""notebook/guide.ipynb executed top to bottom by nbclient in a fresh ipykernel (its quick
mode: 256 items, one epoch on Autodiff(NdArray)); every cell must run without error and the
metrics cell must print the validation accuracy and loss the Learner logged."""

import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebook" / "guide.ipynb"


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def test_guide_notebook_runs(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # the kernel runs in tmp_path, so the notebook's relative artifact dir lands there
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()
    out = "\n".join(_text(c) for c in nb.cells if c.cell_type == "code")
    assert "256 training items, 256 validation items" in out
    # one number per epoch for each metric, read back from the logs in tmp_path
    acc = re.search(r"^Accuracy (\S+)$", out, re.M)
    loss = re.search(r"^Loss (\S+)$", out, re.M)
    assert acc and loss, out
    assert 0.0 <= float(acc.group(1)) <= 100.0 and float(loss.group(1)) > 0.0
    assert (tmp_path / "artifacts/guide-notebook/valid/epoch-1/Loss.log").exists()
    # the plot cell displayed a figure
    shown = [o for o in nb.cells[-1].outputs if o.output_type in ("display_data", "execute_result")]
    assert any("image/png" in o.data for o in shown)
