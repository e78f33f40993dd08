"""Checkpointing strategies: what a recorded op keeps for its backward step.

- `NoCheckpointing` (default): every op keeps the inputs/outputs its gradient rule needs.
- `BalancedCheckpointing`: memory-bound ops (elementwise math, layout ops, cheap activations) keep
  nothing and recompute their forward from their parents during backward; compute-bound ops
  (matmul, conv, reductions, gathers, sorts) keep their output so recomputation stops there.
  An op with an untracked float input cannot be recomputed from the graph and falls back to saving
  (Burn's `CheckpointingError::UntrackedParent`).
"""

from __future__ import annotations


class CheckpointStrategy:
    """Base class; strategies are immutable values and part of the backend's identity."""

    balanced: bool = False

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NoCheckpointing(CheckpointStrategy):
    """Keep what each gradient rule needs (fastest backward, most memory).

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_autodiff import Autodiff, NoCheckpointing
        >>> Autodiff(NdArray(), checkpointing=NoCheckpointing()) is Autodiff(NdArray())
        True
    """


class BalancedCheckpointing(CheckpointStrategy):
    """Recompute memory-bound ops in backward instead of storing their inputs/outputs.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_autodiff import Autodiff, BalancedCheckpointing
        >>> Autodiff(NdArray(), checkpointing=BalancedCheckpointing())
        Autodiff(NdArray(), checkpointing=BalancedCheckpointing())
    """

    balanced = True
