"""Burn's path `burn::data::dataloader::batcher::Batcher`.

Example:
    >>> from burn_dataset.dataloader.batcher import Batcher
    >>> isinstance(object(), Batcher)
    False
"""

from burn_dataset.dataloader._batcher import Batcher

__all__ = ["Batcher"]
