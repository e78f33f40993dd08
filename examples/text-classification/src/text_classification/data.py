"""Labelled sentences and a word tokenizer.

Offline (the default): four topics, like AG News's (world, sports, business, sci/tech). A
sentence mixes words shared by every topic with a few words of its own topic, so the label is
decided by a handful of positions anywhere in the sequence: attention has to find them.
`ag_news` reads AG News through burn-dataset's Hugging Face loader when the network allows.
"""

from __future__ import annotations

import numpy as np

TOPICS = {
    "world": ["minister", "election", "border", "treaty", "embassy", "summit"],
    "sports": ["match", "goal", "coach", "league", "striker", "season"],
    "business": ["shares", "profit", "market", "merger", "investor", "bank"],
    "scitech": ["software", "chip", "robot", "satellite", "research", "network"],
}
COMMON = ["the", "a", "new", "report", "says", "after", "today", "on", "with", "big", "first",
          "week", "plans", "talks", "over", "about"]  # fmt: skip
LABELS = list(TOPICS)


def synthetic_news(n: int, seed: int = 0, length: tuple[int, int] = (8, 16)):
    """(sentences, labels): n sentences of 8-15 words, 2-3 of them from the label's topic."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        label = int(rng.integers(len(LABELS)))
        words = list(rng.choice(COMMON, size=int(rng.integers(*length))))
        for _ in range(int(rng.integers(2, 4))):
            words[int(rng.integers(len(words)))] = str(rng.choice(TOPICS[LABELS[label]]))
        texts.append(" ".join(words))
        labels.append(label)
    return texts, np.array(labels, np.int64)


def ag_news(split: str = "train", limit: int = 20000):
    """(texts, labels) of AG News (needs `datasets` and the network on first use)."""
    from burn_dataset.source.huggingface import HuggingfaceDatasetLoader

    ds = HuggingfaceDatasetLoader("ag_news").dataset(split)
    rows = [ds.get(i) for i in range(min(limit, len(ds)))]
    return [r["text"] for r in rows], np.array([r["label"] for r in rows], np.int64)


class WordTokenizer:
    """Lower-cased words; id 0 pads, id 1 is an unknown word, the rest by frequency."""

    PAD, UNK = 0, 1

    def __init__(self, texts, max_vocab: int = 20000):
        counts: dict[str, int] = {}
        for t in texts:
            for w in t.lower().split():
                counts[w] = counts.get(w, 0) + 1
        words = sorted(counts, key=lambda w: (-counts[w], w))[: max_vocab - 2]
        self.index = {w: i + 2 for i, w in enumerate(words)}

    @property
    def vocab_size(self) -> int:
        return len(self.index) + 2

    def encode(self, texts, max_len: int):
        """(ids Int [n, max_len] padded with 0, padding mask Bool [n, max_len]: True = pad)."""
        ids = np.zeros((len(texts), max_len), np.int64)
        for i, t in enumerate(texts):
            seq = [self.index.get(w, self.UNK) for w in t.lower().split()][:max_len]
            ids[i, : len(seq)] = seq
        return ids, ids == self.PAD
