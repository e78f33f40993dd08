"""The text-classification example's transformer (token + position embeddings, a pre-norm
`TransformerEncoder`, mean pooling, a linear head) on its generated news-like sentences."""

from __future__ import annotations

from burn_tensor import Tensor
from text_classification.data import LABELS, WordTokenizer, synthetic_news
from text_classification.training import accuracy, train

from .run import Task, compare


def train_text(backend, train_size: int = 4000, test_size: int = 1000, epochs: int = 3,
               max_len: int = 32, lr: float = 1e-3, seed: int = 0, model_cfg=None,
               log=print):  # fmt: skip
    """Train the classifier as `uv run text-classification` does (defaults: its defaults).

    Returns `(model on backend, test texts encoded: (ids, mask), test labels)`.
    """
    train_set, test_set = synthetic_news(train_size, seed), synthetic_news(test_size, seed + 1)
    model, _ = train(train_set, test_set, len(LABELS), backend, epochs, 32, lr, max_len, seed,
                     model_cfg, log)  # fmt: skip
    tok = WordTokenizer(train_set[0])  # the tokenizer `train` built: same texts, same ids
    return model, tok.encode(test_set[0], max_len), test_set[1]


def text_task(device, encoded, labels, batch_size: int = 64) -> Task:
    """Accuracy on the encoded test sentences; the timed batch is the first `batch_size`."""
    ids, mask = encoded
    t = Tensor.from_ints(ids[:batch_size], device)
    m = Tensor.from_bool(mask[:batch_size], device)
    return Task("transformer", lambda model: 100.0 * accuracy(model, ids, mask, labels, device),
                lambda model: model.forward(t, m).numpy(), len(ids[:batch_size]),
                lambda d: text_task(d, encoded, labels, batch_size))  # fmt: skip


def quantize_and_compare_text(model, device, encoded, labels, schemes=None, reps: int = 5,
                              dynamic_device=None, gpu_device=None):  # fmt: skip
    """The transformer's rows: float32, then one per scheme (and `+act8` rows on `dynamic_device`,
    GPU times on `gpu_device`)."""
    return compare(model, text_task(device, encoded, labels), schemes, reps, dynamic_device, gpu_device)
