"""Training curves beside the logs (issue 32 item 6): `curves.csv` holds each metric's epoch
means as the log files give them, `curves.png` plots them (matplotlib, the `plot` extra)."""

from __future__ import annotations

import csv

import numpy as np
from real_parts import builder, fit


def _epoch_mean(path):
    # each line of a metric log is "value,count"; the epoch mean weights by count (hand-derived)
    rows = [tuple(map(float, line.split(","))) for line in path.read_text().splitlines()]
    values, counts = np.array(rows).T
    return float((values * counts).sum() / counts.sum())


def test_curves_csv_and_png_after_fit(tmp_path):
    fit(builder(tmp_path))
    rows = list(csv.DictReader((tmp_path / "curves.csv").read_text().splitlines()))
    assert {r["split"] for r in rows} == {"train", "valid"}
    for r in rows:
        log = tmp_path / r["split"] / f"epoch-{r['epoch']}" / f"{r['metric']}.log"
        assert np.isclose(float(r["value"]), _epoch_mean(log), rtol=1e-6), r
    epochs = {int(r["epoch"]) for r in rows}
    assert epochs == {1, 2, 3}
    png = (tmp_path / "curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
