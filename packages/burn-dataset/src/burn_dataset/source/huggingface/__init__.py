"""Hugging Face datasets stored to SQLite (Burn's `burn_dataset::source::huggingface`).

Example:
    >>> from burn_dataset.source.huggingface import HuggingfaceDatasetLoader
    >>> HuggingfaceDatasetLoader("dbpedia_14").with_base_dir("/data").db_file().name
    'dbpedia_14.db'
"""

from burn_dataset.source.huggingface._loader import HuggingfaceDatasetLoader

__all__ = ["HuggingfaceDatasetLoader"]
