"""Generation with and without the autoregressive cache: a decoder-only model (embedding, a
causal `TransformerEncoder`, a linear head) extends a prompt by N tokens, greedily, in modes:
"no_cache" re-runs the whole sequence each step, "cache" runs `forward_autoregressive_inference`,
"static" runs `generate_static` over a static cache (`new_static_cache`), its one-token step
captured where the backend can (Fusion: a CUDA graph on fusion-cuda, a recorded enqueue list on
fusion-opencl) and eager elsewhere, and on a capturing backend "static_eager" the same without
capture. The tokens of every mode must be the same; the issue's target is >= 5x faster than
no_cache for 256 tokens.

    uv run python benches/attention/bench_generation.py [--tokens 256] [--backend ndarray]
        [--modes no_cache,cache,static] [--out benches/results]      # writes generation.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=256, help="tokens to generate (default 256)")
    p.add_argument("--prompt", type=int, default=8, help="prompt length (default 8)")
    p.add_argument("--batch", type=int, default=4, help="sequences at once (default 4)")
    p.add_argument("--d-model", type=int, default=256, help="model width (default 256)")
    p.add_argument("--layers", type=int, default=4, help="encoder layers (default 4)")
    p.add_argument("--heads", type=int, default=8, help="attention heads (default 8)")
    p.add_argument("--vocab", type=int, default=1000, help="vocabulary size (default 1000)")
    p.add_argument("--backend", default="ndarray", help="burn backend name (default ndarray)")
    p.add_argument(
        "--warmup", type=int, default=16,
        help="tokens each mode generates untimed first (kernel compiles, plans; default 16)",
    )  # fmt: skip
    p.add_argument(
        "--modes", default=None,
        help="comma-separated modes to time (default: no_cache,cache,static and, on a backend "
        "that captures, static_eager)",
    )  # fmt: skip
    p.add_argument(
        "--out", type=Path, default=ROOT / "benches" / "results", help="folder of generation.json"
    )
    return p


def build_lm(device, vocab: int = 1000, d_model: int = 256, layers: int = 4, heads: int = 8):
    """The bench's decoder-only model on `device` (a `BenchLm`)."""
    from burn_nn import EmbeddingConfig, LinearConfig
    from burn_nn.transformer import TransformerEncoderConfig

    embed = EmbeddingConfig(vocab, d_model).init(device)
    enc = TransformerEncoderConfig(d_model, 4 * d_model, heads, layers, dropout=0.0,
                                   norm_first=True).init(device)  # fmt: skip
    return _lm_class()(embed=embed, enc=enc, head=LinearConfig(d_model, vocab).init(device))


def _lm_class():
    from burn_nn import Embedding, Linear, Module
    from burn_nn.attention import generate_autoregressive_mask
    from burn_nn.transformer import TransformerEncoder, TransformerEncoderInput

    class BenchLm(Module):
        """Embedding, causal pre-norm encoder, linear head."""

        embed: Embedding
        enc: TransformerEncoder
        head: Linear

        def logits(self, tokens, cache=None):
            """Int [batch, seq] -> the last position's logits [batch, 1, vocab] (through
            `forward_autoregressive_inference` when given the encoder's cache)."""
            b, s = tokens.dims()
            inp = TransformerEncoderInput.new(self.embed.forward(tokens)).mask_attn(
                generate_autoregressive_mask(b, s, tokens.device)
            )
            enc = self.enc
            h = enc.forward(inp) if cache is None else enc.forward_autoregressive_inference(
                inp, cache
            )
            return self.head.forward(h.narrow(1, s - 1, 1))

    return BenchLm


def static_step(model, tokens, position, cache):
    """`generate_static`'s step: the new tokens Int [batch, n] at `position` (Int [1]) ->
    (the last one's logits [batch, 1, vocab], the updated static cache)."""
    from burn_nn.transformer import TransformerEncoderInput

    n = tokens.dims()[1]
    inp = TransformerEncoderInput.new(model.embed.forward(tokens))
    h, cache = model.enc.forward_static_cache(inp, cache, position)
    return model.head.forward(h.narrow(1, n - 1, 1)), cache


def build_model(device, vocab: int = 1000, d_model: int = 256, layers: int = 4, heads: int = 8):
    """`(logits(tokens, cache=None), encoder)` of `build_lm`'s model (benches/probes use it)."""
    lm = build_lm(device, vocab, d_model, layers, heads)
    return lm.logits, lm.enc


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    from burn_nn.generation import Sampler, can_capture, generate, generate_static
    from burn_tensor import Tensor
    from burn_tensor.backend import get_backend

    dev = get_backend(a.backend).device()
    dev.seed(0)
    lm = build_lm(dev, a.vocab, a.d_model, a.layers, a.heads)
    modes = ["no_cache", "cache", "static"] + (["static_eager"] if can_capture(dev) else [])
    if a.modes:
        modes = [m.strip() for m in a.modes.split(",") if m.strip()]
        bad = sorted(set(modes) - {"no_cache", "cache", "static", "static_eager"})
        if bad:
            raise SystemExit(f"bench_generation: unknown mode(s) {bad}; modes: no_cache, cache, "
                             "static, static_eager")  # fmt: skip

    prompt = Tensor.from_ints(
        [[(7 * i + 3 * j) % a.vocab for j in range(a.prompt)] for i in range(a.batch)], dev
    )
    # one static cache per mode, sized for the timed run (the warm-up's shorter run reuses it:
    # its rows are overwritten from position 0, the rest masked), one captured step kept from
    # the warm-up to the timed run, so the timed run replays from its first token
    caches = {m: lm.enc.new_static_cache(a.batch, a.prompt + max(a.tokens, a.warmup))
              for m in ("static", "static_eager")}  # fmt: skip
    captured = None
    if can_capture(dev):
        from burn_fusion import capture

        captured = capture(static_step, name="bench_generation.static_step")

    def run(name, tokens):
        if name in ("static", "static_eager"):
            how = captured if name == "static" and captured is not None else False
            return generate_static(static_step, lm, caches[name], prompt, tokens, Sampler(0.0),
                                   capture=how)  # fmt: skip
        cache = lm.enc.new_autoregressive_cache() if name == "cache" else None
        return generate(lambda tk, c=cache: lm.logits(tk, c), prompt, tokens, Sampler(0.0))

    # Each mode runs once untimed: the first calls build kernels (nvrtc on Cuda, the C compiler
    # on NdArray on a cold cache), which the first timed mode alone would otherwise pay. Session
    # 19 found the H200's 4.0x to be that: warm, both modes are host-bound there (~5 ms a token).
    # The static mode's warm-up also records its captured step (warm call + 2 recordings).
    for name in modes:
        run(name, a.warmup)
    dev.sync()
    results = {}
    for name in modes:
        t = time.perf_counter()
        out = run(name, a.tokens)
        dev.sync()
        results[name] = (time.perf_counter() - t, out.tolist())
        ms = 1e3 * results[name][0] / a.tokens
        print(f"{name:12s} {results[name][0]:8.3f} s  {ms:8.3f} ms/token  ({a.tokens} tokens, "
              f"batch {a.batch})", flush=True)  # fmt: skip
    first = results[modes[0]][1]
    same = all(r[1] == first for r in results.values())
    speedups = {}
    if "no_cache" in results:
        for name in modes[1:]:
            speedups[name] = results["no_cache"][0] / results[name][0]
            met = "met" if speedups[name] >= 5 else "missed"
            print(f"speedup {name} vs no_cache {speedups[name]:.1f}x (target >= 5x: {met})")
    if captured is not None and "static" in results:
        s = captured.stats()
        print(f"static capture: recordings {s['recordings']}, replays {s['replays']}, eager calls "
              f"{s['eager_calls']}, guard misses {s['guard_misses']}, tape {s['tape']}, eager "
              f"reasons {s['eager_reasons']}")  # fmt: skip
    print(f"same tokens in every mode ({', '.join(modes)}): {same}")
    a.out.mkdir(parents=True, exist_ok=True)
    report = {
        "suite": "generation",
        "params": {k: v for k, v in vars(a).items() if k != "out"},
        "seconds": {k: v[0] for k, v in results.items()},
        "speedup": speedups.get("cache"),
        "speedups": speedups,
        "same_tokens": same,
        "threads": os.environ.get("BURN_NUM_THREADS"),
    }
    (a.out / "generation.json").write_text(json.dumps(report, indent=2))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
