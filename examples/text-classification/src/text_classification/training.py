"""Training (cross-entropy, Adam, `Autodiff(backend)`) and test accuracy."""

from __future__ import annotations

import time

import numpy as np
from burn_autodiff import Autodiff
from burn_nn import CrossEntropyLossConfig
from burn_optim import AdamConfig, GradientsParams
from burn_tensor import Tensor

from .data import WordTokenizer
from .model import TextClassifierConfig


def accuracy(model, ids, mask, labels, device, batch: int = 256) -> float:
    correct = 0
    for a in range(0, len(labels), batch):
        t = Tensor.from_ints(ids[a : a + batch], device)
        m = Tensor.from_bool(mask[a : a + batch], device)
        pred = model.forward(t, m).argmax(1).numpy().reshape(-1)
        correct += int((pred == labels[a : a + batch]).sum())
    return correct / len(labels)


def train(train_set, test_set, n_classes, backend, epochs=3, batch=32, lr=1e-3, max_len=32,
          seed=0, model_cfg=None, log=print):  # fmt: skip
    """Returns (model on the inner backend, report with per-epoch loss and test accuracy)."""
    (texts, labels), (test_texts, test_labels) = train_set, test_set
    tok = WordTokenizer(texts)
    ids, mask = tok.encode(texts, max_len)
    tids, tmask = tok.encode(test_texts, max_len)
    device = Autodiff(backend).device()
    device.seed(seed)
    model = TextClassifierConfig(tok.vocab_size, n_classes, max_seq_len=max_len,
                                 **(model_cfg or {})).init(device)  # fmt: skip
    optim, loss_fn = AdamConfig().init(), CrossEntropyLossConfig().init(device)
    rng = np.random.default_rng(seed)
    report, start = {"epochs": []}, time.perf_counter()
    for epoch in range(1, epochs + 1):
        order, losses = rng.permutation(len(labels)), []
        for a in range(0, len(order), batch):
            idx = order[a : a + batch]
            logits = model.forward(
                Tensor.from_ints(ids[idx], device), Tensor.from_bool(mask[idx], device)
            )
            loss = loss_fn.forward(logits, Tensor.from_ints(labels[idx], device))
            model = optim.step(lr, model, GradientsParams.from_grads(loss.backward(), model))
            losses.append(float(loss.into_scalar()))
        valid = model.valid()
        acc = accuracy(valid, tids, tmask, test_labels, valid.head.weight.val().device)
        mean_loss = float(np.mean(losses))
        report["epochs"].append({"epoch": epoch, "loss": mean_loss, "test_accuracy": acc})
        log(f"epoch {epoch}  loss {np.mean(losses):.4f}  test accuracy {acc:.3f}  "
            f"({time.perf_counter() - start:.1f} s)")  # fmt: skip
    report["test_accuracy"] = report["epochs"][-1]["test_accuracy"]
    return model.valid(), report
