"""The one exception type for invalid tensor operations (Burn's `TensorCheck`)."""

from __future__ import annotations


class TensorCheckError(TypeError, ValueError):
    """An operation received arguments it cannot accept.

    The message names the operation and lists every violation, like Burn's `TensorCheck` panic. It
    subclasses both `TypeError` (wrong kind/dtype) and `ValueError` (wrong shape/rank/index) so callers
    can catch either.
    """

    def __init__(self, op: str, violations: list[str] | str):
        if isinstance(violations, str):
            violations = [violations]
        self.op = op
        self.violations = list(violations)
        lines = "\n".join(f"  - {v}" for v in self.violations)
        super().__init__(f"Tensor operation '{op}' is invalid:\n{lines}")


def fail(op: str, *violations: str):
    raise TensorCheckError(op, list(violations))
