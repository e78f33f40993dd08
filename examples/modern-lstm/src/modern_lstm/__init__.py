"""Burn's modern-lstm example: a stacked bidirectional LSTM on generated Fibonacci-like sequences."""

from .data import generate
from .model import LstmNetwork, LstmNetworkConfig
from .training import Result, TrainingConfig, run

__all__ = ["LstmNetwork", "LstmNetworkConfig", "Result", "TrainingConfig", "generate", "run"]
