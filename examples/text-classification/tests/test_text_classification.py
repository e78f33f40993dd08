"""The text-classification example, small: data and tokenizer, and one short training run
that classifies held-out generated sentences far above chance (0.25)."""

from __future__ import annotations

import numpy as np
from burn_ndarray import NdArray
from text_classification.cli import build_parser
from text_classification.data import LABELS, WordTokenizer, synthetic_news
from text_classification.training import train


def test_data_and_tokenizer():
    texts, labels = synthetic_news(20, seed=2)
    assert len(texts) == 20 and set(labels) <= set(range(len(LABELS)))
    tok = WordTokenizer(texts)
    ids, pad = tok.encode(["the goal", "zzz unknown words here"], 3)
    assert ids[0, 2] == 0 and pad.tolist()[0] == [False, False, True]
    assert ids[1].tolist() == [1, 1, 1]  # unknown words, cut at 3


def test_training_beats_chance():
    small = {"d_model": 32, "n_heads": 2, "n_layers": 1, "d_ff": 64}
    _, report = train(synthetic_news(600, 0), synthetic_news(200, 1), len(LABELS), NdArray(),
                      epochs=2, batch=32, lr=3e-3, max_len=16, model_cfg=small,
                      log=lambda *_: None)  # fmt: skip
    assert report["test_accuracy"] > 0.6, report
    assert np.isfinite([e["loss"] for e in report["epochs"]]).all()


def test_cli_parses_defaults():
    a = build_parser().parse_args([])
    assert (a.backend, a.epochs, a.ag_news) == ("ndarray", 3, False)
