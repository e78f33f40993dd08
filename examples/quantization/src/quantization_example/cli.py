"""`uv run quantization-example [--epochs N] [--limit N] [--artifact-dir DIR] [--json]`."""

from __future__ import annotations

import argparse
import json
import os
import sys


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="quantization-example", description=__doc__)
    ap.add_argument("--epochs", type=int, default=4, help="training epochs when no artifact is given")
    ap.add_argument("--limit", type=int, default=None, help="first N training and test items")
    ap.add_argument(
        "--artifact-dir",
        default=None,
        help="a trained guide (`uv run guide train`): its model.mpk.gz is loaded instead of training",
    )
    ap.add_argument("--threads", type=int, default=None, help="NdArray threads (default: all cores)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    return ap


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)

    from burn_autodiff import Autodiff
    from burn_dataset.transform import PartialDataset
    from burn_dataset.vision import DigitsDataset
    from burn_ndarray import NdArray

    from .run import quantize_and_compare, train_quick

    backend = NdArray(num_threads=a.threads) if a.threads else NdArray()
    device = backend.device()
    train_set, test_set = DigitsDataset.train(), DigitsDataset.test()
    if a.limit:
        train_set = PartialDataset(train_set, 0, min(a.limit, len(train_set)))
        test_set = PartialDataset(test_set, 0, min(a.limit, len(test_set)))
    if a.artifact_dir:
        from burn_record import CompactRecorder
        from guide.model import ModelConfig

        path = os.path.join(a.artifact_dir, "model")
        if not os.path.exists(path + ".mpk.gz"):
            print(f"quantization-example: no trained model at {path}.mpk.gz (run `uv run guide train`)", file=sys.stderr)
            return 2
        model = ModelConfig(10, 512).init(device).load_file(path, CompactRecorder(), device)
        print(f"loaded {path}.mpk.gz")
    else:
        print(f"training the guide model for {a.epochs} epoch(s) on {len(train_set)} digits ...")
        model = train_quick(Autodiff(backend).device(), train_set, a.epochs)
    print(f"backend {backend!r}, {backend.num_threads} thread(s), {len(test_set)} test images")
    dynamic = NdArray(num_threads=backend.num_threads, quantize_activations=True).device()
    rows = quantize_and_compare(model, device, test_set, dynamic_device=dynamic)
    for r in rows:
        print(r.row())
    base = rows[0]
    for r in rows[1:]:
        print(
            f"{r.name}: accuracy {r.accuracy - base.accuracy:+.2f} points, record "
            f"{base.record_bytes / r.record_bytes:.2f}x smaller, inference {base.ms_per_batch / r.ms_per_batch:.2f}x f32 speed"
        )
    if a.json:
        import dataclasses

        print(json.dumps([dataclasses.asdict(r) for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
