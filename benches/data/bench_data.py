"""Data-loading throughput: batches/s for MNIST-sized items (28x28 float32 + label).

Compares burn_dataset's DataLoader (0 and 2 worker threads) with PyTorch's DataLoader (0 and 2
worker processes) in the same run when torch is importable. Every loader reads the same items
(`MnistItem`s holding a 28x28 float32 numpy image and an int label), shuffles, and turns 64 items
into one stacked, normalized `[64, 28, 28]` float32 batch plus `[64]` int64 labels:

- burn "numpy batcher": numpy arrays out (no tensor library), the floor for the loader's overhead;
- burn "sqlite + numpy": the same, items read from an SQLite file (msgpack-decoded per batch);
- burn "tensor batcher": burn_tensor tensors on NdArray, as the guide's MnistBatcher produces;
- torch "default_collate": the idiomatic PyTorch pipeline, `__getitem__` returns `(image, label)`,
  `torch.utils.data.default_collate` stacks them into torch tensors, then the same normalization
  in torch ops;
- torch "numpy collate": the exact numpy code of burn's numpy batcher, then `torch.from_numpy`.

Targets (issue 7): burn's tensor batcher vs torch's default_collate, per worker count, "not slower
than PyTorch" (batches/s ratio >= 1). Note the workers differ in kind: torch's are processes
(persistent, items and batches pickled / passed through shared memory), burn's are threads in the
caller's process (batches handed over by reference, but sharing the GIL).

Run: `uv run python benches/data/bench_data.py [--items 10000] [--epochs 5] [--quick]`; with torch
outside the venv: `OMP_WAIT_POLICY=PASSIVE PYTHONPATH=/path/to/torch uv run --no-sync python ...`.
Writes benches/results/data.json and prints a table and the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from burn_dataset import (
    DataLoaderBuilder,
    InMemDataset,
    MnistItem,
    SqliteDataset,
    SqliteDatasetWriter,
)

RESULTS = Path(__file__).resolve().parents[1] / "results" / "data.json"


def make_items(n: int) -> list[MnistItem]:
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 255, size=(n, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, size=n)
    return [MnistItem(images[i], int(labels[i])) for i in range(n)]


def numpy_batch(items: list[MnistItem]) -> tuple[np.ndarray, np.ndarray]:
    images = np.stack([it.image for it in items])
    images = (images / 255.0 - 0.1307) / 0.3081  # the book's normalization
    return images.astype(np.float32), np.array([it.label for it in items], dtype=np.int64)


class NumpyBatcher:
    def batch(self, items, device):
        return numpy_batch(items)


class TensorBatcher:
    """The same batch as burn_tensor tensors (what the guide's MnistBatcher produces)."""

    def __init__(self, tensor_cls):
        self.tensor = tensor_cls

    def batch(self, items, device):
        images, labels = numpy_batch(items)
        return self.tensor.from_data(images, device), self.tensor.from_data(labels, device)


def time_epochs(loader, epochs: int) -> tuple[float, int]:
    """Best batches/s over `epochs` full passes (the first pass also warms caches)."""
    best, batches = 0.0, 0
    for _ in range(epochs):
        start = time.perf_counter()
        batches = sum(1 for _ in loader)
        elapsed = time.perf_counter() - start
        best = max(best, batches / elapsed)
    return best, batches


def bench_burn(items, batch_size, workers, epochs, batcher, device=None, dataset=None):
    loader = (
        DataLoaderBuilder(batcher)
        .batch_size(batch_size)
        .shuffle(42)
        .num_workers(workers)
        .set_device(device)
        .build(dataset if dataset is not None else InMemDataset(items))
    )
    return time_epochs(loader, epochs)


def bench_torch(torch, items, batch_size, workers, epochs, collate_name="default_collate"):
    if collate_name == "default_collate":
        default_collate = torch.utils.data.default_collate

        class TorchItems(torch.utils.data.Dataset):
            def __len__(self):
                return len(items)

            def __getitem__(self, i):
                item = items[i]
                return item.image, item.label

        def collate(batch):
            images, labels = default_collate(batch)  # torch.stack of the images, int64 labels
            return (images / 255.0 - 0.1307) / 0.3081, labels

    else:

        class TorchItems(torch.utils.data.Dataset):
            def __len__(self):
                return len(items)

            def __getitem__(self, i):
                return items[i]

        def collate(batch):
            images, labels = numpy_batch(batch)
            return torch.from_numpy(images), torch.from_numpy(labels)

    loader = torch.utils.data.DataLoader(
        TorchItems(),
        batch_size=batch_size,
        shuffle=True,
        num_workers=workers,
        collate_fn=collate,
        persistent_workers=workers > 0,  # fair: burn's threads are cheap to start each epoch
        generator=torch.Generator().manual_seed(42),
    )
    return time_epochs(loader, epochs)


def build_parser() -> argparse.ArgumentParser:
    """The command line of `benches/data/bench_data.py`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--items", type=int, default=10_000, help="items in the dataset (default: %(default)s)"
    )
    parser.add_argument(
        "--batch-size", type=int, default=64, help="items per batch (default: %(default)s)"
    )
    parser.add_argument(
        "--epochs", type=int, default=5, help="epochs timed per loader (default: %(default)s)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="tiny run (1000 items, 1 epoch), for CI smoke tests"
    )
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help="folder for data.json (default: benches/results)"
    )
    return parser


def main() -> None:
    args = build_parser().parse_args()
    if args.quick:
        args.items, args.epochs = 1_000, 1

    items = make_items(args.items)
    rows = []

    def record(framework, loader_name, workers, result, note=""):
        rate, batches = result
        rows.append(
            {
                "framework": framework,
                "loader": loader_name,
                "num_workers": workers,
                "batches_per_s": round(rate, 1),
                "items_per_s": round(rate * args.batch_size, 1),
                "batches_per_epoch": batches,
                "note": note,
            }
        )

    for workers in (0, 2):
        record(
            "burn",
            "numpy batcher",
            workers,
            bench_burn(items, args.batch_size, workers, args.epochs, NumpyBatcher()),
        )
    with tempfile.TemporaryDirectory() as tmp:
        # Items read from an SQLite file (msgpack-decoded per batch): here I/O and decoding
        # release the GIL, which is where worker threads pay off.
        path = Path(tmp) / "items.db"
        with SqliteDatasetWriter(path) as writer:
            writer.write_many("train", ({"image": it.image, "label": it.label} for it in items))
        sqlite = SqliteDataset(path, "train", item_type=MnistItem)
        for workers in (0, 2):
            record(
                "burn",
                "sqlite + numpy",
                workers,
                bench_burn(
                    items, args.batch_size, workers, args.epochs, NumpyBatcher(), dataset=sqlite
                ),
            )
        sqlite.close()
    try:
        from burn_ndarray import NdArray
        from burn_tensor import Tensor
    except ImportError as err:
        rows.append({"framework": "burn", "loader": "tensor batcher", "skipped": str(err)})
    else:
        device = NdArray().device()
        for workers in (0, 2):
            record(
                "burn",
                "tensor batcher",
                workers,
                bench_burn(
                    items, args.batch_size, workers, args.epochs, TensorBatcher(Tensor), device
                ),
            )
    try:
        import torch
    except ImportError:
        rows.append(
            {"framework": "torch", "loader": "DataLoader", "skipped": "torch is not installed"}
        )
    else:
        for collate_name in ("default_collate", "numpy collate"):
            for workers in (0, 2):
                record(
                    "torch",
                    collate_name,
                    workers,
                    bench_torch(torch, items, args.batch_size, workers, args.epochs, collate_name),
                    note="worker processes" if workers else "",
                )

    def rate(framework, loader_name, workers):
        for row in rows:
            if (row["framework"], row["loader"], row.get("num_workers")) == (
                framework,
                loader_name,
                workers,
            ):
                return row["batches_per_s"]
        return None

    targets = []
    for workers in (0, 2):
        burn_rate = rate("burn", "tensor batcher", workers)
        torch_rate = rate("torch", "default_collate", workers)
        ratio = None if not (burn_rate and torch_rate) else round(burn_rate / torch_rate, 2)
        targets.append(
            {
                "description": f"burn tensor batcher >= torch DataLoader, {workers} workers",
                "num_workers": workers,
                "metric": "burn/torch batches/s",
                "limit": 1.0,
                "value": ratio,
                "met": None if ratio is None else ratio >= 1.0,
                "verdict": "N/A" if ratio is None else ("met" if ratio >= 1.0 else "missed"),
            }
        )

    result = {
        "suite": "data",
        "description": "shuffled 28x28 float32 items + int label, stacked and normalized",
        "items": args.items,
        "batch_size": args.batch_size,
        "epochs": args.epochs,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "workers": "burn: threads in this process; torch: persistent worker processes",
        "results": rows,
        "targets": targets,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(
        f"data loading: {args.items} items, batch {args.batch_size}, best of {args.epochs} epochs, "
        f"{os.cpu_count()} CPUs (burn workers: threads; torch workers: processes)"
    )
    print(f"{'framework':<10}{'loader':<16}{'workers':>8}{'batches/s':>12}{'items/s':>12}")
    for row in rows:
        if "skipped" in row:
            print(f"{row['framework']:<10}{row['loader']:<16}  skipped: {row['skipped']}")
        else:
            print(
                f"{row['framework']:<10}{row['loader']:<16}{row['num_workers']:>8}"
                f"{row['batches_per_s']:>12.1f}{row['items_per_s']:>12.0f}"
            )
    print("targets (issue 7): not slower than PyTorch for the same worker count")
    for t in targets:
        value = "-" if t["value"] is None else f"{t['value']:.2f}x"
        print(f"  {t['description']:<56} burn/torch {value:>7}  {t['verdict'].upper()}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
