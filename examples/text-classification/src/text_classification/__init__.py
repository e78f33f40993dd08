"""Burn's text-classification example: a transformer encoder over words, mean-pooled, with a
linear head; trained on generated news-like sentences (offline) or AG News."""

from .data import WordTokenizer, synthetic_news
from .model import TextClassifier, TextClassifierConfig
from .training import train

__all__ = ["TextClassifier", "TextClassifierConfig", "WordTokenizer", "synthetic_news", "train"]
