"""`modern-lstm`: train Burn's LstmNetwork to predict the next value of Fibonacci-like sequences."""

from __future__ import annotations

import argparse


def build_parser() -> argparse.ArgumentParser:
    from burn_tensor import add_backend_argument

    p = argparse.ArgumentParser(prog="modern-lstm", description=__doc__)
    p.add_argument("--num-epochs", type=int, default=30, help="epochs (Burn: 30)")
    p.add_argument("--batch-size", type=int, default=32, help="batch size (Burn: 32)")
    p.add_argument("--lr", type=float, default=1e-3, help="learning rate (Burn: 1e-3)")
    p.add_argument("--num-sequences", type=int, default=1000, help="generated sequences (Burn: 1000)")
    p.add_argument("--hidden-size", type=int, default=32, help="LSTM hidden size (Burn: 32)")
    p.add_argument("--num-layers", type=int, default=2, help="stacked layers (Burn: 2)")
    p.add_argument("--unidirectional", action="store_true", help="one direction per layer")
    add_backend_argument(p, autodiff=True)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if min(args.num_epochs, args.batch_size, args.hidden_size, args.num_layers) < 1:
        parser.error("--num-epochs, --batch-size, --hidden-size and --num-layers must be >= 1")
    if args.num_sequences < 5:
        parser.error("--num-sequences must be >= 5 (80 % train, 20 % valid)")
    from burn_autodiff import Autodiff
    from burn_tensor import resolve_backend

    from .model import LstmNetworkConfig
    from .training import TrainingConfig, run

    _, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    model = LstmNetworkConfig(hidden_size=args.hidden_size, num_layers=args.num_layers,
                              bidirectional=not args.unidirectional)  # fmt: skip
    cfg = TrainingConfig(model, num_epochs=args.num_epochs, batch_size=args.batch_size,
                         lr=args.lr, num_sequences=args.num_sequences)  # fmt: skip
    r = run(cfg, Autodiff(inner).device(), log=lambda s: print(s, flush=True))
    err = r.predictions - r.targets
    print(f"Valid RMSE {float((err ** 2).mean() ** 0.5):.4f} (targets from "
          f"{float(r.targets.min()):.2f} to {float(r.targets.max()):.2f})")  # fmt: skip
    print("Predicted vs expected (first 5 valid sequences):")
    for p, t in zip(r.predictions[:5], r.targets[:5]):
        print(f"  {p:8.3f}  {t:8.3f}")
    return 0
