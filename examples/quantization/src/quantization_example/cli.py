"""`uv run quantization-example [--model guide|transformer|both] [--epochs N] [--limit N]
[--text-train-size N] [--text-epochs N] [--artifact-dir DIR] [--threads N] [--gpu cuda|opencl]
[--json]`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="quantization-example", description=__doc__)
    ap.add_argument("--model", choices=["guide", "transformer", "both"], default="both",
                    help="which model(s) to train, quantize and compare (default both)")  # fmt: skip
    ap.add_argument("--epochs", type=int, default=4, help="guide: training epochs when no artifact is given")
    ap.add_argument("--limit", type=int, default=None, help="guide: first N training and test images")
    ap.add_argument(
        "--artifact-dir",
        default=None,
        help="guide: a trained guide (`uv run guide train`): its model.mpk.gz is loaded instead of training",
    )
    ap.add_argument("--text-train-size", type=int, default=4000, help="transformer: generated training sentences")
    ap.add_argument("--text-test-size", type=int, default=1000, help="transformer: generated test sentences")
    ap.add_argument("--text-epochs", type=int, default=3, help="transformer: training epochs")
    ap.add_argument("--threads", type=int, default=None, help="NdArray threads (default: all cores)")
    ap.add_argument("--gpu", choices=["cuda", "opencl"], default=None,
                    help="also time each float32 / weight-only model's batch on this backend's device")  # fmt: skip
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    return ap


def _guide(a, backend, dynamic, gpu):
    from burn_autodiff import Autodiff
    from burn_dataset.transform import PartialDataset
    from burn_dataset.vision import DigitsDataset

    from .guide_task import quantize_and_compare, train_quick

    device = backend.device()
    train_set, test_set = DigitsDataset.train(), DigitsDataset.test()
    if a.limit:
        train_set = PartialDataset(train_set, 0, min(a.limit, len(train_set)))
        test_set = PartialDataset(test_set, 0, min(a.limit, len(test_set)))
    if a.artifact_dir:
        from burn_record import CompactRecorder
        from guide.model import ModelConfig

        path = os.path.join(a.artifact_dir, "model")
        model = ModelConfig(10, 512).init(device).load_file(path, CompactRecorder(), device)
        print(f"loaded {path}.mpk.gz")
    else:
        print(f"training the guide model for {a.epochs} epoch(s) on {len(train_set)} digits ...")
        model = train_quick(Autodiff(backend).device(), train_set, a.epochs)
    print(f"guide: {len(test_set)} test images")
    return quantize_and_compare(model, device, test_set, dynamic_device=dynamic, gpu_device=gpu)


def _transformer(a, backend, dynamic, gpu):
    from .text_task import quantize_and_compare_text, train_text

    print(f"training the text-classification transformer for {a.text_epochs} epoch(s) on "
          f"{a.text_train_size} generated sentences ...")  # fmt: skip
    model, encoded, labels = train_text(backend, a.text_train_size, a.text_test_size, a.text_epochs)
    print(f"transformer: {len(labels)} test sentences")
    return quantize_and_compare_text(model, backend.device(), encoded, labels, dynamic_device=dynamic,
                                     gpu_device=gpu)  # fmt: skip


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    if a.artifact_dir and a.model != "transformer":
        path = os.path.join(a.artifact_dir, "model.mpk.gz")
        if not os.path.exists(path):  # before any training: a typo costs nothing
            print(f"quantization-example: no trained model at {path} (run `uv run guide train`)", file=sys.stderr)
            return 2

    from burn_ndarray import NdArray

    backend = NdArray(num_threads=a.threads) if a.threads else NdArray()
    print(f"backend {backend!r}, {backend.num_threads} thread(s)")
    # the +act8 rows: the int8 model moved to a backend that quantizes activations on the fly
    dynamic = NdArray(num_threads=backend.num_threads, quantize_activations=True).device()
    gpu = None
    if a.gpu:
        from burn_tensor import get_backend

        gpu = get_backend(a.gpu).device()
        print(f"GPU timings on {gpu.backend!r}")
    rows = []
    if a.model in ("guide", "both"):
        rows += _guide(a, backend, dynamic, gpu)
    if a.model in ("transformer", "both"):
        rows += _transformer(a, backend, dynamic, gpu)
    print()
    for r in rows:
        print(r.row())
    print()
    for r in rows:
        base = next(b for b in rows if b.model == r.model and b.name == "float32")
        if r is base:
            continue
        print(
            f"{r.model} {r.name}: accuracy {r.accuracy - base.accuracy:+.2f} points, record "
            f"{base.record_bytes / r.record_bytes:.2f}x smaller, inference "
            f"{base.ms_per_batch / r.ms_per_batch:.2f}x f32 speed"
        )
        for path, why in r.kept_float.items():
            print(f"    kept float: {path}: {why}")
    if a.json:
        print(json.dumps([dataclasses.asdict(r) for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
