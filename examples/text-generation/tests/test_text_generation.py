"""The text-generation example end to end, small: the corpus and tokenizer, a short training
run whose loss falls well below the uniform guess, and generation that gives the same text with
the autoregressive cache, the static cache and none."""

from __future__ import annotations

import math

import pytest
from burn_ndarray import NdArray
from burn_nn.generation import Sampler
from text_generation.cli import build_parser
from text_generation.data import CharTokenizer, synthetic_corpus
from text_generation.training import TrainingConfig, sample, train


def test_corpus_and_tokenizer():
    text = synthetic_corpus(50, seed=3)
    assert text == synthetic_corpus(50, seed=3) and text.count(".") == 50
    tok = CharTokenizer(text)
    assert tok.decode(tok.encode("alice sees")) == "alice sees"
    with pytest.raises(ValueError, match=r"not in the corpus: \['Z'\]"):
        tok.encode("Z")


def test_training_learns_and_cached_generation_matches():
    text = synthetic_corpus(300, seed=1)
    cfg = TrainingConfig(steps=60, batch=8, seq=24, lr=1e-2, log_every=30)
    small = {"d_model": 32, "n_heads": 2, "n_layers": 1, "d_ff": 64, "max_seq_len": 48}
    model, tok, report = train(text, NdArray(), cfg, small, log=lambda *_: None)
    assert report["final_loss"] < 0.75 * math.log(tok.vocab_size), report
    a = sample(model, tok, "bob ", 20, Sampler(0.8, top_k=5, seed=4), cache=True)
    b = sample(model, tok, "bob ", 20, Sampler(0.8, top_k=5, seed=4), cache=False)
    c = sample(model, tok, "bob ", 20, Sampler(0.8, top_k=5, seed=4), cache="static")
    assert a == b == c and a.startswith("bob ") and len(a) == 24


def test_cli_parses_defaults():
    a = build_parser().parse_args([])
    assert (a.backend, a.steps, a.hf_dataset) == ("ndarray", 400, None)
