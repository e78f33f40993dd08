"""Text metrics (Burn's `metric::{cer, wer, perplexity}`): `CharErrorRate`, `WordErrorRate` and
`PerplexityMetric`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._base import Metric, MetricEntry, MetricMetadata, Numeric, NumericEntry, to_numpy
from ._state import FormatOptions, NumericMetricState


def edit_distance(reference: Any, prediction: Any) -> int:
    """Levenshtein distance: the fewest substitutions, insertions and deletions turning
    `reference` into `prediction`.

    Example:
        >>> edit_distance([1, 2, 3], [1, 3, 4])
        2
    """
    prev = list(range(len(prediction) + 1))
    for i, r in enumerate(reference):
        curr = [i + 1] + [0] * len(prediction)
        for j, p in enumerate(prediction):
            curr[j + 1] = prev[j] if r == p else 1 + min(prev[j], prev[j + 1], curr[j])
        prev = curr
    return prev[len(prediction)]


def _sequences(item: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    outputs, targets = to_numpy(item.outputs), to_numpy(item.targets)
    if outputs.ndim != 2 or outputs.shape != targets.shape:
        raise ValueError(
            f"{name}: outputs and targets must both be [batch, seq_len] token ids, got "
            f"{list(outputs.shape)} and {list(targets.shape)}"
        )
    return outputs.astype(np.int64), targets.astype(np.int64)


@dataclass
class CerInput:
    """Input of `CharErrorRate`: `outputs` and `targets`, `[batch, seq_len]` Int token ids."""

    outputs: Any
    targets: Any


@dataclass
class WerInput:
    """Input of `WordErrorRate`: `outputs` and `targets`, `[batch, seq_len]` Int token ids."""

    outputs: Any
    targets: Any


class _ErrorRate(Metric, Numeric):
    """Shared bookkeeping: a percentage per batch, weighted by the batch size."""

    label = ""

    def __init__(self, pad_token: int | None = None) -> None:
        self.state = NumericMetricState()
        self.pad_token = pad_token

    @classmethod
    def new(cls) -> Any:
        return cls()

    def with_pad_token(self, index: int) -> Any:
        self.pad_token = int(index)
        return self

    def name(self) -> str:
        return self.label

    def _rate(self, pairs: list[tuple[np.ndarray, np.ndarray]], batch: int) -> MetricEntry:
        distance = sum(edit_distance(t.tolist(), o.tolist()) for t, o in pairs)
        length = sum(len(t) for t, _ in pairs)
        value = 100.0 * distance / length if length > 0 else 0.0
        return self.state.update(value, batch, FormatOptions(self.name()).unit("%").precision(2))

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()

    def running_value(self) -> float:
        return self.state.running_value()


class CharErrorRate(_ErrorRate):
    """Character error rate, in percent (Burn's `CharErrorRate`, name "CER"): the summed edit
    distance of the batch's sequences over their summed target length.

    With a pad token, each sequence keeps its first n tokens, n being how many of its tokens
    are not padding (Burn's rule: padding is expected at the end).

    Example:
        >>> m = CharErrorRate()
        >>> _ = m.update(CerInput([[1, 2, 3, 4]], [[1, 2, 5, 4]]), MetricMetadata.fake())
        >>> m.value()
        25.0
    """

    Input = CerInput
    label = "CER"

    def update(self, item: CerInput, metadata: MetricMetadata) -> MetricEntry:
        outputs, targets = _sequences(item, "CharErrorRate")
        pairs = []
        for o, t in zip(outputs, targets, strict=True):
            if self.pad_token is not None:
                o, t = o[: int((o != self.pad_token).sum())], t[: int((t != self.pad_token).sum())]
            pairs.append((t, o))
        return self._rate(pairs, len(targets))


class WordErrorRate(_ErrorRate):
    """Word error rate, in percent (Burn's `WordErrorRate`, name "WER"); token ids are words.

    With a pad token, each sequence ends at its first pad token (Burn's `take_while`).

    Example:
        >>> m = WordErrorRate().with_pad_token(0)
        >>> _ = m.update(WerInput([[7, 8, 0, 0]], [[7, 9, 6, 0]]), MetricMetadata.fake())
        >>> round(m.value(), 4)
        66.6667
    """

    Input = WerInput
    label = "WER"

    def update(self, item: WerInput, metadata: MetricMetadata) -> MetricEntry:
        outputs, targets = _sequences(item, "WordErrorRate")
        pairs = []
        for o, t in zip(outputs, targets, strict=True):
            if self.pad_token is not None:
                o, t = _until(o, self.pad_token), _until(t, self.pad_token)
            pairs.append((t, o))
        return self._rate(pairs, len(targets))


def _until(seq: np.ndarray, pad: int) -> np.ndarray:
    hits = np.flatnonzero(seq == pad)
    return seq[: hits[0]] if len(hits) else seq


@dataclass
class PerplexityInput:
    """Input of `PerplexityMetric`: `outputs` `[tokens, vocab]` logits, `targets` `[tokens]`."""

    outputs: Any
    targets: Any


class PerplexityMetric(Metric, Numeric):
    """exp(mean negative log-likelihood of the targets under softmax(outputs)) (Burn's
    `PerplexityMetric`); padded targets (`with_pad_token`) are left out of sum and count.

    `running_value()` is the epoch's perplexity, exp(total NLL / total tokens); `value()` the
    latest batch's (burn-py's convention for every numeric metric, so the plots show batches).
    A log line holds the batch perplexity and its token count.

    Example:
        >>> import numpy as np
        >>> m = PerplexityMetric()
        >>> _ = m.update(PerplexityInput(np.zeros((2, 4)), [0, 3]), MetricMetadata.fake())
        >>> round(m.value(), 6)  # uniform over 4 tokens
        4.0
    """

    Input = PerplexityInput

    def __init__(self, pad_token: int | None = None) -> None:
        self.pad_token = pad_token
        self.reset_state()

    @classmethod
    def new(cls) -> PerplexityMetric:
        return cls()

    def with_pad_token(self, index: int) -> PerplexityMetric:
        self.pad_token = int(index)
        return self

    def name(self) -> str:
        return "Perplexity"

    def reset_state(self) -> None:
        self.sum_nll, self.total_tokens, self.current = 0.0, 0, math.nan

    def update(self, item: PerplexityInput, metadata: MetricMetadata) -> MetricEntry:
        logits = to_numpy(item.outputs).astype(np.float64)
        targets = to_numpy(item.targets).astype(np.int64).reshape(-1)
        if logits.ndim != 2 or len(targets) != logits.shape[0]:
            raise ValueError(
                f"PerplexityMetric: outputs must be [tokens, vocab] and targets [tokens], got "
                f"{list(logits.shape)} and {list(to_numpy(item.targets).shape)}"
            )
        keep = np.ones(len(targets), bool) if self.pad_token is None else targets != self.pad_token
        if ((targets[keep] < 0) | (targets[keep] >= logits.shape[1])).any():
            raise ValueError(f"PerplexityMetric: targets must be in 0..{logits.shape[1] - 1}")
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        picked = log_probs[np.arange(len(targets)), np.where(keep, targets, 0)]
        nll, tokens = -float(picked[keep].sum()), int(keep.sum())
        self.sum_nll += nll
        self.total_tokens += tokens
        self.current = math.exp(nll / tokens) if tokens else math.inf
        fmt = FormatOptions(self.name()).precision(2)
        formatted = f"epoch {fmt.format(self.running_value())} - batch {fmt.format(self.current)}"
        serialized = NumericEntry.Aggregated(self.current, tokens).serialize()
        return MetricEntry(self.name(), formatted, serialized)

    def clear(self) -> None:
        self.reset_state()

    def value(self) -> float:
        return self.current

    def running_value(self) -> float:
        return math.exp(self.sum_nll / self.total_tokens) if self.total_tokens else math.inf
