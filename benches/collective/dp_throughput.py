"""Data-parallel throughput: items per second and validation accuracy for 1 and N processes
(one GPU each), with the Learner.

    python -m burn_train.launch --nproc-per-node N benches/collective/dp_throughput.py \
        [--model guide|transformer] [--backend cuda] [--batch-size B] [--epochs E] ...

`--model guide` (default): the guide's conv net; the training set is the bundled digits'
training split repeated `--repeat` times (so an epoch has enough steps to time); validation is
the digits test split. `--model transformer`: the compute-bound `seq_task.SeqClassifier` (a
burn-nn TransformerEncoder, `--d-model`, `--layers`, `--seq`) on `--items` synthetic sequences,
validated on 2048 more (see seq_task.py for why the guide model cannot show scaling).

Each process trains on `Autodiff(<backend>).device(BURN_LOCAL_RANK)` with its share of every
global batch. Rank 0 prints one JSON line: world size, items per second of training over the
epochs after the first (which compiles kernels; validation is not timed), the final
validation accuracy and a digest of its parameters; every other rank prints
`rank R params_sha256 DIGEST` (not JSON), so a run can check that the replicas stayed equal.
Use BURN_COLLECTIVE=nccl on GPUs; `BURN_DDP_BUCKET_MB=0` turns off the reduction of gradient
buckets during the backward pass (default 25 MB buckets), to compare.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="data-parallel throughput of the guide model")
    parser.add_argument("--backend", default="cuda", help="backend entry-point name")
    parser.add_argument("--batch-size", type=int, default=1024, help="global batch size")
    parser.add_argument("--epochs", type=int, default=6, help="epochs (the first is warm-up)")
    parser.add_argument("--repeat", type=int, default=16, help="copies of the training split")
    parser.add_argument(
        "--lr", type=float, default=None, help="Adam's learning rate (guide 2e-3, transformer 5e-4)"
    )
    parser.add_argument(
        "--model",
        choices=("guide", "transformer"),
        default="guide",
        help="guide conv net (overhead-bound) or transformer encoder",
    )
    parser.add_argument("--items", type=int, default=16384, help="transformer: training items")
    parser.add_argument("--seq", type=int, default=128, help="transformer: sequence length")
    parser.add_argument("--d-model", type=int, default=512, help="transformer: d_model")
    parser.add_argument("--layers", type=int, default=6, help="transformer: encoder layers")
    parser.add_argument(
        "--post-norm", action="store_true", help="transformer: post-norm layers (default pre-norm)"
    )
    parser.add_argument(
        "--mixed-precision", choices=("bf16", "f16"), default=None,
        help="train with burn_optim.MixedPrecision (one process only; default: full precision)",
    )  # fmt: skip
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N",
        help="print the N functions with most own time over the timed epochs (rank 0)",
    )  # fmt: skip
    parser.add_argument(
        "--save-params", default=None, metavar="NPZ",
        help="rank 0 saves its parameters there (compare runs, e.g. sharded optimizer state "
        "against plain data parallel: benches/collective/compare_params.py A.npz B.npz)",
    )  # fmt: skip
    return parser  # fmt: skip


def memory_report(learner) -> dict:
    """This rank's optimizer-state bytes (its record: the whole state, or its shard with
    BURN_DDP_SHARD_OPTIM=1) and, on a GPU, cupy's pool high-water mark (the pool keeps freed
    blocks, so its total is the peak the run reached)."""
    import numpy as np

    def nbytes(rec) -> int:
        if isinstance(rec, dict):
            return sum(nbytes(v) for v in rec.values())
        if isinstance(rec, list | tuple):
            return sum(nbytes(v) for v in rec)
        to_numpy = getattr(rec, "to_numpy", None) or getattr(rec, "numpy", None)
        return int(np.asarray(to_numpy()).nbytes) if callable(to_numpy) else 0

    out = {"optim_state_mb": round(nbytes(learner.optim.to_record()) / 2**20, 2)}
    try:
        import cupy

        out["gpu_pool_peak_mb"] = round(cupy.get_default_memory_pool().total_bytes() / 2**20, 1)
    except Exception:  # noqa: BLE001 - no cupy or no GPU: CPU run
        pass
    return out


class _Timer:
    """A metrics renderer timing each training epoch from the end of its first step to its end
    (rank 0), the device synchronised at both marks: validation and the first step (batching
    and, in epoch 1, kernel compilation) stay out of the measured span."""

    def __init__(self, device, profile: int = 0) -> None:
        self.device = device
        self.spans: list[float] = []
        self._start: float | None = None
        self.profiler = None
        if profile:  # cProfile over the timed spans (epochs 2..): where a step's time goes
            import cProfile

            self.profiler = cProfile.Profile()

    def __getattr__(self, name):  # every other renderer call is a no-op
        return lambda *a, **k: None

    def render_train(self, item) -> None:
        if item.iteration == 1:
            self.device.sync()
            self._start = time.perf_counter()
            if self.profiler is not None and item.epoch > 1:
                self.profiler.enable()

    def end_epoch(self, split, epoch) -> None:
        if str(split).lower().endswith("train") and self._start is not None:
            self.device.sync()
            self.spans.append(time.perf_counter() - self._start)
            self._start = None
            if self.profiler is not None:
                self.profiler.disable()

    def report(self, top: int) -> None:
        """The `top` functions by own time, to stderr (the spans' GPU waits show as the
        synchronising calls' own time)."""
        import pstats

        if self.profiler is not None:
            stats = pstats.Stats(self.profiler, stream=sys.stderr)
            stats.sort_stats("tottime").print_stats(top)


def params_digest(model) -> str:
    """SHA-256 (16 hex digits) of the parameters' bytes in field order: equal on two ranks
    exactly when their replicas are (gradients all-reduced keep them bitwise equal)."""
    import numpy as np

    h = hashlib.sha256()
    for name, p in model.named_parameters():
        h.update(name.encode())
        h.update(np.ascontiguousarray(p.val().to_data().numpy()).tobytes())
    return h.hexdigest()[:16]


def _guide_task(args, device):
    """(model, training items, batcher, validation dataset, input field) of the guide model."""
    import guide.training  # noqa: F401 - train_step / valid_step
    from burn_dataset.vision import DigitsDataset
    from guide.data import MnistBatcher
    from guide.model import ModelConfig

    base = DigitsDataset.train()
    items = [base.get(i) for i in range(len(base))] * args.repeat
    model = ModelConfig(10, 512).init(device)
    return model, items, MnistBatcher(), DigitsDataset.test(), "images"


def _transformer_task(args, device):
    """The same for the transformer encoder on synthetic sequences (seq_task.py)."""
    from pathlib import Path

    from burn_dataset import InMemDataset

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from seq_task import SeqBatcher, make_items, seq_classifier

    vocab, classes = 64, 8
    items = make_items(args.items, args.seq, vocab, classes, seed=1)
    valid = InMemDataset(make_items(2048, args.seq, vocab, classes, seed=2))
    model = seq_classifier(device, vocab, classes, args.d_model, args.layers, not args.post_norm)
    return model, items, SeqBatcher(), valid, "tokens"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from burn_autodiff import Autodiff
    from burn_dataset import DataLoaderBuilder, InMemDataset
    from burn_optim import AdamConfig
    from burn_tensor import get_backend
    from burn_train import LearnerBuilder
    from burn_train.metric import AccuracyMetric

    local = int(os.environ.get("BURN_LOCAL_RANK", "0"))
    backend = Autodiff(get_backend(args.backend))
    device = backend.device(local % backend.device_count())  # CPU runs share the one device
    device.seed(1)
    task = _transformer_task if args.model == "transformer" else _guide_task
    model, items, batcher, valid_set, field = task(args, device)
    train = DataLoaderBuilder(batcher).batch_size(args.batch_size).shuffle(1)
    train = train.set_device(device).build(InMemDataset(items))
    valid = DataLoaderBuilder(batcher).batch_size(512).set_device(device.inner())
    valid = valid.build(valid_set)
    lr = args.lr if args.lr is not None else (5e-4 if args.model == "transformer" else 2e-3)
    timer = _Timer(device, args.profile)
    builder = (
        LearnerBuilder(tempfile.mkdtemp(prefix="dp-throughput-"))
        .metric_valid_numeric(AccuracyMetric())
        .renderer(timer)
        .with_application_logger(False)
        .num_epochs(args.epochs)
    )
    if args.mixed_precision:
        builder = builder.mixed_precision(args.mixed_precision)
    learner = builder.build(model, AdamConfig().init(), lr)
    start = time.perf_counter()
    model = learner.fit(train, valid)
    # Validation accuracy of the trained model (rank 0's replica).
    inner = model.valid()
    correct = 0
    for batch in valid:
        pred = inner.forward(getattr(batch, field)).argmax(1).flatten(0, 1)
        correct += int(pred.equal(batch.targets).int().sum().into_scalar())
    # Items per second over epochs 2.. (epoch 1 compiles kernels), each timed from the end of
    # its first step: len(items) - batch items per span (the first batch is a full one).
    spans = timer.spans[1:]
    timed_items = (len(items) - args.batch_size) * len(spans)
    per_sec = timed_items / sum(spans) if spans and timed_items > 0 else float("nan")
    if args.profile:
        timer.report(args.profile)
    digest = params_digest(model)
    rank = os.environ.get("BURN_RANK", "0")
    if rank == "0":
        world = int(os.environ.get("BURN_WORLD_SIZE", "1"))
        line = json.dumps({
            "world_size": world, "backend": args.backend, "model": args.model,
            "mixed_precision": args.mixed_precision,
            "batch": args.batch_size, "items_per_s": round(per_sec, 1),
            "valid_accuracy": round(100 * correct / len(valid_set), 2),
            "wall_s": round(time.perf_counter() - start, 1), "params_sha256": digest,
            # host time blocked on the gradient reduction (see burn-train README), and the
            # bucket size it overlapped with (0: reduced after the backward pass)
            "collective_wait_ms_per_step": (learner.collective_wait or {}).get("ms_per_step"),
            "bucket_mb": os.environ.get("BURN_DDP_BUCKET_MB", "25"),
            "shard_optim": os.environ.get("BURN_DDP_SHARD_OPTIM", "0"),
            **memory_report(learner),
        })  # fmt: skip
        if args.save_params:
            import numpy as np

            np.savez(args.save_params, **{
                n: p.val().to_data().numpy() for n, p in model.named_parameters()})  # fmt: skip
    else:
        line = f"rank {rank} params_sha256 {digest}"
    sys.stdout.flush()
    # One write per line: print's text and newline can interleave with another rank's.
    os.write(sys.stdout.fileno(), (line + "\n").encode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
