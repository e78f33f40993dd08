"""`text-classification`: train the transformer classifier and report its test accuracy.

    uv run text-classification                                  # generated sentences, NdArray
    uv run text-classification --backend opencl                 # any burn backend by name
    uv run text-classification --ag-news --max-len 64           # AG News (network + datasets)
"""

from __future__ import annotations

import argparse
import json
import sys


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="text-classification", description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="ndarray", help="burn backend name (default ndarray)")
    p.add_argument("--epochs", type=int, default=3, help="passes over the training set (default 3)")
    p.add_argument("--batch", type=int, default=32, help="sentences per step (default 32)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (default 1e-3)")
    p.add_argument("--max-len", type=int, default=32, help="words per sentence kept (default 32)")
    p.add_argument("--train-size", type=int, default=4000, help="generated training sentences")
    p.add_argument("--test-size", type=int, default=1000, help="generated test sentences")
    p.add_argument("--ag-news", action="store_true",
                   help="train on AG News instead (needs network + datasets)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed of data, weights and batches")
    p.add_argument("--json", default=None, help="write the run's report to this file")
    return p


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    from burn_tensor.backend import get_backend

    from .data import LABELS, ag_news, synthetic_news
    from .training import train

    if a.ag_news:
        train_set, test_set = ag_news("train"), ag_news("test", limit=7600)
    else:
        train_set = synthetic_news(a.train_size, a.seed)
        test_set = synthetic_news(a.test_size, a.seed + 1)
    _, report = train(train_set, test_set, len(LABELS), get_backend(a.backend), a.epochs,
                      a.batch, a.lr, a.max_len, a.seed)  # fmt: skip
    print(f"test accuracy {report['test_accuracy']:.3f}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
