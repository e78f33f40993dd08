"""The torch columns: the same rows in torch eager, `torch.compile` and a whole step captured as
one CUDA graph (torch's documented `torch.cuda.graph` recipe: static inputs, warm-up on a side
stream, Adam with `capturable=True`, replay)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._rows import HIDDEN, LR, NUM_CLASSES, VOCAB


def guide_model(torch, initial: dict | None):
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3)
            self.conv2 = nn.Conv2d(8, 16, 3)
            self.pool = nn.AdaptiveAvgPool2d((8, 8))
            self.dropout = nn.Dropout(0.5)
            self.linear1 = nn.Linear(16 * 8 * 8, HIDDEN)
            self.linear2 = nn.Linear(HIDDEN, NUM_CLASSES)
            self.activation = nn.ReLU()

        def forward(self, images):
            b, h, w = images.shape
            x = images.reshape(b, 1, h, w)
            x = self.dropout(self.conv1(x))
            x = self.activation(self.dropout(self.conv2(x)))
            x = self.pool(x).reshape(b, 16 * 8 * 8)
            x = self.activation(self.dropout(self.linear1(x)))
            return self.linear2(x)

    torch.manual_seed(0)
    return Model()


def transformer_model(torch, d_model: int, layers: int):
    nn = torch.nn
    heads = 8 if d_model % 8 == 0 and d_model >= 64 else 1

    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(VOCAB, d_model)
            layer = nn.TransformerEncoderLayer(
                d_model, heads, 4 * d_model, dropout=0.0, batch_first=True, norm_first=True
            )
            self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.output = nn.Linear(d_model, NUM_CLASSES)

        def forward(self, tokens):
            return self.output(self.encoder(self.embedding(tokens)).mean(1))

    torch.manual_seed(0)
    return Seq()


def steps(torch, model, x_np: np.ndarray, y_np: np.ndarray | None, dev: str) -> dict[str, Callable]:
    """{"torch eager", "torch.compile", "torch cuda graph"} step callables (the last only on
    CUDA). `y_np` None: inference (forward, argmax, read)."""
    out: dict[str, Callable[[], Any]] = {}
    cuda = dev.startswith("cuda")

    def make(compiled: bool, capturable: bool = False):
        m = _copy(torch, model).to(dev)
        x = torch.from_numpy(x_np.copy()).to(dev)
        if y_np is None:
            m.eval()
            fwd = torch.compile(m) if compiled else m

            def infer():
                with torch.no_grad():
                    return int(fwd(x).argmax(1)[0].item())

            return infer, None
        m.train()
        y = torch.from_numpy(y_np.copy()).to(dev)
        opt = torch.optim.Adam(m.parameters(), lr=LR, eps=1e-5, capturable=capturable)
        fwd = torch.compile(m) if compiled else m
        ce = torch.nn.functional.cross_entropy

        def step():
            opt.zero_grad(set_to_none=not capturable)
            loss = ce(fwd(x), y)
            loss.backward()
            opt.step()
            return loss

        return step, (m, opt, x, y)

    out["torch eager"] = make(False)[0]
    try:
        out["torch.compile"] = make(True)[0]
    except Exception as exc:  # noqa: BLE001 - a missing compiler toolchain: report, go on
        out["torch.compile"] = _failed(exc)
    if cuda and y_np is not None:
        out["torch cuda graph"] = _graph_step(torch, *make(False, capturable=True))
    return out


def _graph_step(torch, step, held):
    """torch's recipe: warm up on a side stream, capture one whole step, replay it."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()

    def replay():
        g.replay()

    replay.held = held  # keep the static tensors alive
    return replay


def _copy(torch, model):
    import copy

    return copy.deepcopy(model)


def _failed(exc):
    def fail():
        raise RuntimeError(f"unavailable: {type(exc).__name__}: {exc}")

    return fail
