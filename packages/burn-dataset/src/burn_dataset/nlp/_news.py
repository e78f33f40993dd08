"""`AgNewsDataset` and `DbPediaDataset`: the news and Wikipedia-abstract classification sets
in their CSV form (`label,title,content`, no header), as fast.ai publishes them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from burn_dataset._archive import ensure_extracted
from burn_dataset._cache import default_cache_dir
from burn_dataset._in_memory import InMemDataset

AG_NEWS_URL = "https://s3.amazonaws.com/fast-ai-nlp/ag_news_csv.tgz"
DBPEDIA_URL = "https://s3.amazonaws.com/fast-ai-nlp/dbpedia_csv.tgz"
AG_NEWS_CLASSES = ("World", "Sports", "Business", "Technology")
DBPEDIA_CLASSES = (
    "Company", "EducationalInstitution", "Artist", "Athlete", "OfficeHolder",
    "MeanOfTransportation", "Building", "NaturalPlace", "Village", "Animal", "Plant", "Album",
    "Film", "WrittenWork",
)  # fmt: skip


def _folder(
    root: str | os.PathLike[str] | None, folder: str, url: str, what: str, default: str
) -> Path:
    """The folder holding train.csv/test.csv: `root` (or `root/folder`), else the cache, where
    the archive is downloaded and extracted on first use."""
    if root is not None:
        root = Path(root)
        return root / folder if (root / folder).is_dir() else root
    cache = default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    # fast.ai publishes no checksum for these archives: the download is checked by extraction
    return ensure_extracted(cache, folder, url, default.rsplit("/", 1)[1], None, what)


def _csv(folder: Path, name: str) -> Path:
    path = folder / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (expected train.csv and test.csv in {folder})")
    return path


@dataclass
class AgNewsItem:
    """One AG News article (Burn's `AgNewsItem`): `label` is the CSV's class, "1".."4"."""

    label: str
    title: str
    content: str


class AgNewsDataset:
    """AG News: 120,000 train and 7,600 test news articles in 4 classes (Burn's
    `AgNewsDataset`). `train()`/`test()` read `train.csv`/`test.csv` from `root` (or
    `root/ag_news_csv/`), by default the dataset cache, where the archive from `AG_NEWS_URL` (or
    `url`, a mirror) is downloaded on first use; offline, `DownloadError` names that URL.

    Example:
        >>> AgNewsDataset.class_name("2")
        'Sports'
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, url: str | None = None):
        self.directory = _folder(root, "ag_news_csv", url or AG_NEWS_URL, "AG News", AG_NEWS_URL)

    @classmethod
    def new(cls, root: str | os.PathLike[str] | None = None) -> AgNewsDataset:
        return cls(root)

    def train(self) -> InMemDataset[AgNewsItem]:
        return InMemDataset.from_csv(_csv(self.directory, "train.csv"), AgNewsItem, has_header=False)

    def test(self) -> InMemDataset[AgNewsItem]:
        return InMemDataset.from_csv(_csv(self.directory, "test.csv"), AgNewsItem, has_header=False)

    @staticmethod
    def class_name(label: str | int) -> str:
        """The class of a CSV label ("1".."4")."""
        i = int(label)
        if not 1 <= i <= len(AG_NEWS_CLASSES):
            raise ValueError(f"AG News labels are 1..4, got {label!r}")
        return AG_NEWS_CLASSES[i - 1]


@dataclass
class DbPediaItem:
    """One DBpedia abstract (the `text-classification` example's `DbPediaItem`): `label` is the
    class index 0..13 (the CSV's 1..14 minus one)."""

    title: str
    content: str
    label: int

    @property
    def text(self) -> str:
        """The text the example classifies: `Title: {title} - Content: {content}`."""
        return f"Title: {self.title} - Content: {self.content}"


def _dbpedia_row(label: str, title: str, content: str) -> DbPediaItem:
    value = int(label)
    if not 1 <= value <= len(DBPEDIA_CLASSES):
        raise ValueError(f"label {label!r} is outside 1..{len(DBPEDIA_CLASSES)}")
    return DbPediaItem(title, content, value - 1)


class DbPediaDataset:
    """DBpedia ontology: 560,000 train and 70,000 test abstracts in 14 classes, from
    `dbpedia_csv/{train,test}.csv` under `root` (default: the cache, downloaded from
    `DBPEDIA_URL` on first use; offline, `DownloadError` names it).

    Example:
        >>> DbPediaDataset.class_name(0), DbPediaDataset.num_classes()
        ('Company', 14)
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, url: str | None = None):
        self.directory = _folder(root, "dbpedia_csv", url or DBPEDIA_URL, "DBpedia", DBPEDIA_URL)

    def _read(self, name: str) -> InMemDataset[DbPediaItem]:
        return InMemDataset.from_csv(
            _csv(self.directory, name), _dbpedia_row, has_header=False,
            fieldnames=["label", "title", "content"],
        )  # fmt: skip

    def train(self) -> InMemDataset[DbPediaItem]:
        return self._read("train.csv")

    def test(self) -> InMemDataset[DbPediaItem]:
        return self._read("test.csv")

    @staticmethod
    def num_classes() -> int:
        return len(DBPEDIA_CLASSES)

    @staticmethod
    def class_name(label: int) -> str:
        if not 0 <= label < len(DBPEDIA_CLASSES):
            raise ValueError(f"DBpedia labels are 0..13, got {label!r}")
        return DBPEDIA_CLASSES[label]
