"""Text datasets (Burn's `burn_dataset::nlp`, plus the DBpedia set of its text-classification
example): AG News and DBpedia CSVs, and text files in class folders.

Example:
    >>> from burn_dataset.nlp import AG_NEWS_CLASSES
    >>> len(AG_NEWS_CLASSES)
    4
"""

from burn_dataset.nlp._news import (
    AG_NEWS_CLASSES,
    AG_NEWS_URL,
    DBPEDIA_CLASSES,
    DBPEDIA_URL,
    AgNewsDataset,
    AgNewsItem,
    DbPediaDataset,
    DbPediaItem,
)
from burn_dataset.nlp._text_folder import (
    SUPPORTED_TEXT_EXTENSIONS,
    TextData,
    TextDatasetItem,
    TextFolderDataset,
    read_text,
)

__all__ = [
    "AG_NEWS_CLASSES",
    "AG_NEWS_URL",
    "DBPEDIA_CLASSES",
    "DBPEDIA_URL",
    "SUPPORTED_TEXT_EXTENSIONS",
    "AgNewsDataset",
    "AgNewsItem",
    "DbPediaDataset",
    "DbPediaItem",
    "TextData",
    "TextDatasetItem",
    "TextFolderDataset",
    "read_text",
]
