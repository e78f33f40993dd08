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
global batch. Timing comes from the Learner's `step_times()` (burn-train README): every training
epoch is timed from its start to its end with the device synchronised at both, and items per
second count the epochs after the first (which compiles kernels; validation is not timed). (The
bench used to time from a renderer's callback for the first step, which the Learner delivers
with the values it reads back, every 16 steps on a GPU: with 16 steps per epoch the span was ~0
and the rate nonsense, 14.4M items/s.)

Every rank prints `rank R breakdown {json}`: its milliseconds per step in each phase (data,
forward, backward, collective, loss_check, optimizer, metrics, stop_check, other; they add up
to step_ms) over the timed epochs. Without `--profile` these are host times: on a GPU the host
runs ahead and waits for the device where it reads values (`metrics`: the Learner's read-back
every 16 steps; `loss_check` with `--read-every 1`, which reads and checks every step's loss
before its update; `data` if the batch's copy to the GPU waits); with `--profile` the device
is synchronised at every mark, so each phase holds its device time.
Rank 0 then prints one JSON line: world size, items per second, the final validation accuracy,
a digest of its parameters, the collective wait and its breakdown; every other rank prints
`rank R params_sha256 DIGEST`, so a run can check that the replicas stayed equal.
Use BURN_COLLECTIVE=nccl on GPUs; `--bucket-mb 0` (or BURN_DDP_BUCKET_MB=0) turns off the
reduction of gradient buckets during the backward pass (default 25 MB buckets), to compare;
`--shard-optimizer` shards the optimizer state (each rank updates 1/N of the parameters).
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
    parser.add_argument(
        "--valid-items", type=int, default=2048, help="transformer: validation items"
    )
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
        "--profile", action="store_true",
        help="synchronise the device at every phase mark of the per-step breakdown, so each "
        "phase holds its device time (slower: a profiling run, not a speed measurement)",
    )  # fmt: skip
    parser.add_argument(
        "--cprofile", type=int, default=0, metavar="N",
        help="print the N functions with most own time over the whole fit (rank 0, stderr)",
    )  # fmt: skip
    parser.add_argument(
        "--shard-optimizer", action="store_true",
        help="sharded optimizer state (ZeRO-1, BURN_DDP_SHARD_OPTIM=1): each rank updates 1/N",
    )  # fmt: skip
    parser.add_argument(
        "--bucket-mb", type=float, default=None, metavar="MB",
        help="gradient bucket size reduced during the backward pass (BURN_DDP_BUCKET_MB; "
        "0: after the pass; default: the environment's, else 25)",
    )  # fmt: skip
    parser.add_argument(
        "--read-every", type=int, default=None, metavar="N",
        help="steps whose values the Learner reads back together (default: 1 on a CPU, 16 on a GPU)",
    )  # fmt: skip
    parser.add_argument(
        "--num-workers", type=int, default=0, metavar="N",
        help="threads building training batches ahead (default 0: in the training loop)",
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


def breakdown(learner, skip: int = 1) -> dict:
    """This rank's per-step phase times over the epochs after the first `skip` (the Learner's
    `step_times`, see burn-train's README): ms per step of each phase, adding up to step_ms."""
    summary = learner.step_times.summary(skip)
    return {
        "step_ms": round(summary["step_ms"], 3),
        "cpu_ms": round(summary["cpu_ms"], 3),
        "steps": summary["steps"],
        "synced": summary["synced"],
        "phases_ms": {k: round(v, 3) for k, v in summary["phases_ms"].items()},
    }


def throughput(learner, items: int, skip: int = 1) -> float:
    """Items per second over the training epochs after the first `skip` (which compile
    kernels): every epoch trains all `items`, each timed from its start to its end with the
    device synchronised at both (validation is not timed)."""
    summary = learner.step_times.summary(skip)
    if summary["epochs"] == 0 or summary["seconds"] <= 0:
        return float("nan")
    return items * summary["epochs"] / summary["seconds"]


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
    valid = InMemDataset(make_items(args.valid_items, args.seq, vocab, classes, seed=2))
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
    from burn_train.renderer import MetricsRenderer

    if args.shard_optimizer:  # read by the Learner's data-parallel strategy
        os.environ["BURN_DDP_SHARD_OPTIM"] = "1"
    if args.bucket_mb is not None:
        os.environ["BURN_DDP_BUCKET_MB"] = f"{args.bucket_mb:g}"
    local = int(os.environ.get("BURN_LOCAL_RANK", "0"))
    backend = Autodiff(get_backend(args.backend))
    device = backend.device(local % backend.device_count())  # CPU runs share the one device
    device.seed(1)
    task = _transformer_task if args.model == "transformer" else _guide_task
    model, items, batcher, valid_set, field = task(args, device)
    train = DataLoaderBuilder(batcher).batch_size(args.batch_size).shuffle(1)
    train = train.num_workers(args.num_workers).set_device(device).build(InMemDataset(items))
    valid = DataLoaderBuilder(batcher).batch_size(512).set_device(device.inner())
    valid = valid.build(valid_set)
    lr = args.lr if args.lr is not None else (5e-4 if args.model == "transformer" else 2e-3)
    builder = (
        LearnerBuilder(tempfile.mkdtemp(prefix="dp-throughput-"))
        .metric_valid_numeric(AccuracyMetric())
        .renderer(MetricsRenderer())
        .metric_loggers()  # no metric files, no curves at the end (matplotlib: ~1 s)
        .with_application_logger(False)
        .num_epochs(args.epochs)
        .step_times(sync=args.profile)
    )
    if args.read_every is not None:
        builder = builder.read_every(args.read_every)
    if args.mixed_precision:
        builder = builder.mixed_precision(args.mixed_precision)
    learner = builder.build(model, AdamConfig().init(), lr)
    profiler = None
    if args.cprofile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start = time.perf_counter()
    model = learner.fit(train, valid)
    wall = time.perf_counter() - start
    if profiler is not None:
        import pstats

        profiler.disable()
        if os.environ.get("BURN_RANK", "0") == "0":
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(
                args.cprofile
            )
    # Validation accuracy of the trained model (rank 0's replica).
    inner = model.valid()
    correct = 0
    for batch in valid:
        pred = inner.forward(getattr(batch, field)).argmax(1).flatten(0, 1)
        correct += int(pred.equal(batch.targets).int().sum().into_scalar())
    # Items per second over epochs 2.. (epoch 1 compiles kernels), from this rank's epoch
    # spans (the ranks step together: rank 0's is the run's).
    per_sec = throughput(learner, len(items))
    steps = breakdown(learner)
    digest = params_digest(model)
    rank = os.environ.get("BURN_RANK", "0")
    lines = [f"rank {rank} breakdown {json.dumps(steps)}"]
    if rank == "0":
        world = int(os.environ.get("BURN_WORLD_SIZE", "1"))
        lines.append(json.dumps({
            "world_size": world, "backend": args.backend, "model": args.model,
            "mixed_precision": args.mixed_precision,
            "batch": args.batch_size, "items_per_s": round(per_sec, 1),
            "valid_accuracy": round(100 * correct / len(valid_set), 2),
            "wall_s": round(wall, 3), "timed_s": round(learner.step_times.summary()["seconds"], 3),
            "timed_items": len(items) * learner.step_times.summary()["epochs"],
            "params_sha256": digest,
            # host time blocked on the gradient reduction (see burn-train README), and the
            # bucket size it overlapped with (0: reduced after the backward pass)
            "collective_wait_ms_per_step": (learner.collective_wait or {}).get("ms_per_step"),
            "bucket_mb": os.environ.get("BURN_DDP_BUCKET_MB", "25"),
            "shard_optim": os.environ.get("BURN_DDP_SHARD_OPTIM", "0"),
            "step_ms": steps["step_ms"], "phases_ms": steps["phases_ms"],
            **memory_report(learner),
        }))  # fmt: skip
        if args.save_params:
            import numpy as np

            np.savez(args.save_params, **{
                n: p.val().to_data().numpy() for n, p in model.named_parameters()})  # fmt: skip
    else:
        lines.append(f"rank {rank} params_sha256 {digest}")
    sys.stdout.flush()
    # One write per line: print's text and newline can interleave with another rank's.
    for line in lines:
        os.write(sys.stdout.fileno(), (line + "\n").encode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
