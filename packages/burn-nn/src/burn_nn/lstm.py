"""`burn_nn.lstm`: Burn's `burn::nn::lstm` path."""

from ._rnn import BiLstm, BiLstmConfig, Lstm, LstmConfig, LstmState

__all__ = ["BiLstm", "BiLstmConfig", "Lstm", "LstmConfig", "LstmState"]
