"""`burn_nn.gru`: Burn's `burn::nn::gru` path."""

from ._rnn import Gru, GruConfig

__all__ = ["Gru", "GruConfig"]
