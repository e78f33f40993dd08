"""`named-tensor`: run Burn's named-tensor program on a backend."""

from __future__ import annotations

import argparse


def build_parser() -> argparse.ArgumentParser:
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="named-tensor", description=__doc__)
    parser.add_argument("--batch-size", type=int, default=32, help="Batch (Burn: 32)")
    parser.add_argument("--seq-length", type=int, default=48, help="SeqLength (Burn: 48)")
    parser.add_argument("--d-model", type=int, default=24, help="DModel (Burn: 24)")
    add_backend_argument(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if min(args.batch_size, args.seq_length, args.d_model) < 1:
        parser.error("--batch-size, --seq-length and --d-model must be >= 1")
    from burn_tensor import resolve_backend

    from .run import run

    _, backend, line = resolve_backend(args.backend)
    print(line, flush=True)
    run(backend.device(), args.batch_size, args.seq_length, args.d_model)
    return 0
