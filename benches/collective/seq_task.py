"""A compute-bound model for the data-parallel throughput bench: a transformer encoder
classifying synthetic token sequences.

The guide model at batch 1024 is overhead-bound on a GPU (a step is ~13 ms of mostly Python and
kernel launches), so doubling the GPUs cannot double its items per second. A burn-nn
`TransformerEncoder` (d_model 512, 6 layers, sequences of 128 at batch 256) spends ~100 ms per
step in GEMMs on one H100, which is the regime where data parallelism is measured.

The task: each sequence holds tokens of `vocab` ids; ids `0..classes-1` are class tokens. The
label is the class token that occurs most often (the generator plants the label's token more
often than any other class token, so the label is always well defined). Items are generated
from a seed, so every rank builds the same data without files.

Shapes: tokens Int `[batch, seq]` -> logits `[batch, classes]`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from burn_nn import (
    CrossEntropyLossConfig,
    Embedding,
    EmbeddingConfig,
    Linear,
    LinearConfig,
    Module,
    TransformerEncoder,
    TransformerEncoderConfig,
)
from burn_nn.transformer import TransformerEncoderInput
from burn_tensor import Tensor
from burn_train import ClassificationOutput, TrainOutput


@dataclass(frozen=True)
class SeqItem:
    tokens: np.ndarray  # [seq] int64
    label: int


def make_items(n: int, seq: int, vocab: int, classes: int, seed: int) -> list[SeqItem]:
    """`n` items whose label is the most frequent class token (a strict maximum)."""
    if not 0 < classes < vocab:
        raise ValueError(f"make_items: need 0 < classes < vocab, got {classes} and {vocab}")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, size=n)
    tokens = rng.integers(classes, vocab, size=(n, seq))  # filler tokens
    noise = seq // 8  # random class tokens, fewer than the planted ones
    planted = seq // 4
    for i in range(n):
        pos = rng.permutation(seq)[: planted + noise]
        tokens[i, pos[:planted]] = labels[i]
        others = rng.integers(0, classes - 1, size=noise)
        tokens[i, pos[planted:]] = others + (others >= labels[i])  # any class but the label
    return [SeqItem(tokens[i].copy(), int(labels[i])) for i in range(n)]


@dataclass
class SeqBatch:
    tokens: Tensor  # [batch, seq] Int
    targets: Tensor  # [batch] Int


class SeqBatcher:
    def batch(self, items, device=None) -> SeqBatch:
        tokens = np.stack([item.tokens for item in items]).astype(np.int64)
        targets = np.array([item.label for item in items], dtype=np.int64)
        return SeqBatch(Tensor.from_data(tokens, device), Tensor.from_data(targets, device))


class SeqClassifier(Module):
    """Embedding -> TransformerEncoder -> mean over the sequence -> Linear."""

    embedding: Embedding
    encoder: TransformerEncoder
    output: Linear

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.embedding.forward(tokens)  # [batch, seq, d_model]
        x = self.encoder.forward(TransformerEncoderInput.new(x))
        return self.output.forward(x.mean_dim(1).squeeze_dim(1))  # [batch, classes]

    def _classify(self, batch: SeqBatch) -> ClassificationOutput:
        logits = self.forward(batch.tokens)
        loss = CrossEntropyLossConfig().init(logits.device).forward(logits, batch.targets)
        return ClassificationOutput(loss, logits, batch.targets)

    def train_step(self, batch: SeqBatch) -> TrainOutput:
        item = self._classify(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def valid_step(self, batch: SeqBatch) -> ClassificationOutput:
        return self._classify(batch)


def seq_classifier(
    device, vocab: int, classes: int, d_model: int, layers: int, norm_first: bool = True
) -> SeqClassifier:
    """The bench's model: 8 heads (or fewer for tiny d_model), d_ff = 4 d_model, no dropout (so
    1 and N processes train the same function and their accuracies compare), layer norm before
    each block (pre-norm: 6 post-norm layers of 512 at Adam's 2e-3 collapsed to one class on the
    H100, 11.6% accuracy)."""
    heads = 8 if d_model % 8 == 0 and d_model >= 64 else 1
    encoder = TransformerEncoderConfig(d_model, 4 * d_model, heads, layers, norm_first=norm_first)
    encoder = encoder.with_dropout(0.0)
    return SeqClassifier(
        embedding=EmbeddingConfig(vocab, d_model).init(device),
        encoder=encoder.init(device),
        output=LinearConfig(d_model, classes).init(device),
    )
