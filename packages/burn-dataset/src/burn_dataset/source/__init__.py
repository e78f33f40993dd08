"""Dataset sources (Burn's `burn_dataset::source`).

Example:
    >>> from burn_dataset.source import HuggingfaceDatasetLoader
    >>> HuggingfaceDatasetLoader("mnist").with_subset("mnist").with_base_dir("/d").db_file().name
    'mnist-mnist.db'
"""

from burn_dataset.source.huggingface import HuggingfaceDatasetLoader

__all__ = ["HuggingfaceDatasetLoader"]
