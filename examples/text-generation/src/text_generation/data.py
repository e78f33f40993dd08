"""The corpus and the tokenizer.

Offline (the default): sentences drawn from a small grammar by a seeded generator, so the
example runs anywhere and its results are reproducible. `hf_corpus` reads a text column of a
Hugging Face dataset through burn-dataset's loader when the network allows.
"""

from __future__ import annotations

import numpy as np

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank"]
VERBS = ["sees", "likes", "eats", "finds", "paints", "holds"]
ADJECTIVES = ["red", "green", "small", "big", "old", "shiny"]
NOUNS = ["apple", "fox", "boat", "house", "cup", "lamp"]


def synthetic_corpus(n_sentences: int, seed: int = 0) -> str:
    """`n_sentences` sentences "<name> <verb> the|a <adjective> <noun>." joined by spaces."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_sentences):
        det = "the" if rng.random() < 0.5 else "a"
        adj, noun = rng.choice(ADJECTIVES), rng.choice(NOUNS)
        words = (rng.choice(NAMES), rng.choice(VERBS), det, adj, noun)
        out.append(" ".join(words) + ".")
    return " ".join(out)


def hf_corpus(name: str, column: str = "text", split: str = "train", limit: int = 2000) -> str:
    """The first `limit` rows of a Hugging Face dataset's text column, joined (needs the
    `datasets` package and the network on first use; burn-dataset caches it in SQLite)."""
    from burn_dataset.source.huggingface import HuggingfaceDatasetLoader

    ds = HuggingfaceDatasetLoader(name).dataset(split)
    rows = [ds.get(i) for i in range(min(limit, len(ds)))]
    return " ".join(str(r[column]) for r in rows)


class CharTokenizer:
    """Characters to ids (sorted alphabet of the corpus) and back."""

    def __init__(self, text: str):
        self.alphabet = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.alphabet)}

    @property
    def vocab_size(self) -> int:
        return len(self.alphabet)

    def encode(self, text: str) -> np.ndarray:
        unknown = sorted(set(text) - set(self.index))
        if unknown:
            raise ValueError(f"CharTokenizer: characters not in the corpus: {unknown}")
        return np.array([self.index[c] for c in text], np.int64)

    def decode(self, ids) -> str:
        return "".join(self.alphabet[int(i)] for i in ids)


def batches(ids: np.ndarray, batch: int, seq: int, rng: np.random.Generator):
    """One random batch: (inputs [batch, seq], targets [batch, seq] = inputs shifted by one)."""
    starts = rng.integers(0, len(ids) - seq - 1, size=batch)
    x = np.stack([ids[s : s + seq] for s in starts])
    y = np.stack([ids[s + 1 : s + seq + 1] for s in starts])
    return x, y
