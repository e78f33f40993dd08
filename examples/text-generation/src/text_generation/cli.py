"""`text-generation`: train the decoder-only model, then print generated text.

    uv run text-generation --steps 400                       # generated corpus, NdArray
    uv run text-generation --backend opencl --steps 400      # any burn backend by name
    uv run text-generation --hf-dataset roneneldan/TinyStories --hf-column text   # with network
"""

from __future__ import annotations

import argparse
import json
import sys

from burn_nn.generation import Sampler


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="text-generation", description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="ndarray", help="burn backend name (default ndarray)")
    p.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    p.add_argument("--batch", type=int, default=32, help="sequences per step (default 32)")
    p.add_argument("--seq", type=int, default=64, help="characters per sequence (default 64)")
    p.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate (default 3e-3)")
    p.add_argument("--sentences", type=int, default=4000,
                   help="sentences of the generated corpus (default 4000)")  # fmt: skip
    p.add_argument("--hf-dataset", default=None,
                   help="train on a Hugging Face dataset (needs network + datasets)")  # fmt: skip
    p.add_argument("--hf-column", default="text", help="its text column (default text)")
    p.add_argument("--prompt", default="alice ", help="prompt of the generated sample")
    p.add_argument("--generate", type=int, default=60, help="characters to generate (default 60)")
    p.add_argument("--temperature", type=float, default=0.8, help="sampling temperature")
    p.add_argument("--top-k", type=int, default=10, help="top-k sampling (default 10)")
    p.add_argument("--top-p", type=float, default=0.95, help="top-p sampling (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="seed of data, weights and sampling")
    p.add_argument("--static", action="store_true",
                   help="sample through the static cache (burn_nn generate_static: its one-token "
                   "step captured on a Fusion backend such as fusion-cuda)")  # fmt: skip
    p.add_argument("--json", default=None, help="write the run's report to this file")
    return p


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    from burn_tensor.backend import get_backend

    from .data import hf_corpus, synthetic_corpus
    from .training import TrainingConfig, sample, train

    text = (
        hf_corpus(a.hf_dataset, a.hf_column)
        if a.hf_dataset
        else synthetic_corpus(a.sentences, a.seed)
    )
    cfg = TrainingConfig(steps=a.steps, batch=a.batch, seq=a.seq, lr=a.lr, seed=a.seed)
    model, tok, report = train(text, get_backend(a.backend), cfg)
    sampler = Sampler(a.temperature, top_k=a.top_k, top_p=a.top_p, seed=a.seed)
    text_out = sample(model, tok, a.prompt, a.generate, sampler, "static" if a.static else True)
    print(f"generated: {text_out!r}")
    report["sample"] = text_out
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
