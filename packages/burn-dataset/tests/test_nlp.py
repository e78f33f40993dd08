"""AG News, DBpedia (CSV `label,title,content`) and TextFolderDataset on fixtures written by the
tests; the archive download through a local HTTP server; the offline error naming the URL."""

import http.server
import tarfile
import threading

import pytest
from burn_dataset import DownloadError
from burn_dataset.nlp import (
    AgNewsDataset,
    AgNewsItem,
    DbPediaDataset,
    DbPediaItem,
    TextFolderDataset,
    read_text,
)

AG_TRAIN = (
    '"3","Wall St. Bears Claw Back Into the Black (Reuters)","Reuters - Short-sellers, Wall '
    "Street's dwindling\\band of ultra-cynics, are seeing green again.\"\n"
    '"2","Nets get ""Carter"" from Raptors","INDIANAPOLIS -- line one,\nline two"\n'
)


def _ag_folder(root):
    folder = root / "ag_news_csv"
    folder.mkdir(parents=True)
    (folder / "train.csv").write_text(AG_TRAIN)
    (folder / "test.csv").write_text('"1","t","c"\n')
    return folder


def test_ag_news_csv_rows(tmp_path):
    _ag_folder(tmp_path)
    ds = AgNewsDataset(tmp_path)
    train = ds.train()
    assert len(train) == 2 and len(ds.test()) == 1
    assert train.get(0) == AgNewsItem(
        "3",
        "Wall St. Bears Claw Back Into the Black (Reuters)",
        "Reuters - Short-sellers, Wall Street's dwindling\\band of ultra-cynics, are seeing green "
        "again.",
    )
    # quotes doubled inside a field, a newline inside a quoted field
    assert train.get(1).title == 'Nets get "Carter" from Raptors'
    assert train.get(1).content == "INDIANAPOLIS -- line one,\nline two"
    assert AgNewsDataset.class_name(train.get(1).label) == "Sports"


def test_dbpedia_labels_are_zero_based_and_checked(tmp_path):
    folder = tmp_path / "dbpedia_csv"
    folder.mkdir()
    (folder / "train.csv").write_text('1,"E. D. Abbott Ltd"," Abbott of Farnham"\n14,"B","c"\n')
    (folder / "test.csv").write_text('15,"x","y"\n')
    ds = DbPediaDataset(tmp_path)
    assert ds.train().get(0) == DbPediaItem("E. D. Abbott Ltd", " Abbott of Farnham", 0)
    assert ds.train().get(1).label == 13 and DbPediaDataset.class_name(13) == "WrittenWork"
    assert ds.train().get(0).text == "Title: E. D. Abbott Ltd - Content:  Abbott of Farnham"
    with pytest.raises(ValueError, match=r"test.csv:1: label '15' is outside 1..14"):
        ds.test()


def test_missing_csv_names_the_folder(tmp_path):
    (tmp_path / "ag_news_csv").mkdir()
    with pytest.raises(FileNotFoundError, match=r"ag_news_csv/train.csv not found"):
        AgNewsDataset(tmp_path).train()


def test_offline_error_names_the_url(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_DATASET_CACHE_DIR", str(tmp_path))
    with pytest.raises(DownloadError, match=r"AG News: .* http://127.0.0.1:9/ag.tgz could not be"):
        AgNewsDataset(url="http://127.0.0.1:9/ag.tgz")
    with pytest.raises(DownloadError, match=r"DBpedia: .*dbpedia_csv is not there"):
        DbPediaDataset(url="http://127.0.0.1:9/db.tgz")
    assert list(tmp_path.iterdir()) == []


def test_download_extracts_into_the_cache(tmp_path, monkeypatch):
    """The archive is served over HTTP on localhost: downloaded, extracted, then reused."""
    src = tmp_path / "src"
    _ag_folder(src)
    served = tmp_path / "www"
    served.mkdir()
    with tarfile.open(served / "ag_news_csv.tgz", "w:gz") as tar:
        tar.add(src / "ag_news_csv", arcname="ag_news_csv")
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(served))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.RequestHandlerClass.log_message = lambda *a: None
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    cache = tmp_path / "cache"
    monkeypatch.setenv("BURN_DATASET_CACHE_DIR", str(cache))
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/ag_news_csv.tgz"
        assert len(AgNewsDataset(url=url).train()) == 2
    finally:
        server.shutdown()
        server.server_close()
    assert sorted(p.name for p in cache.iterdir()) == ["ag_news_csv", "ag_news_csv.tgz"]
    assert len(AgNewsDataset(url="http://127.0.0.1:9/x.tgz").test()) == 1  # cached: no network


def test_archive_with_escaping_members_is_refused(tmp_path, monkeypatch):
    import io

    cache = tmp_path / "cache"
    cache.mkdir()
    with tarfile.open(cache / "ag_news_csv.tgz", "w:gz") as tar:
        info = tarfile.TarInfo("../evil.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    monkeypatch.setenv("BURN_DATASET_CACHE_DIR", str(cache))
    from burn_dataset import DatasetError

    with pytest.raises(DatasetError, match=r"ag_news_csv.tgz: cannot extract the archive"):
        AgNewsDataset()
    assert not (tmp_path / "evil.txt").exists()
    assert sorted(p.name for p in cache.iterdir()) == ["ag_news_csv.tgz"]


def test_text_folder_classes_and_encodings(tmp_path):
    (tmp_path / "neg").mkdir()
    (tmp_path / "pos" / "deep").mkdir(parents=True)
    (tmp_path / "neg" / "a.txt").write_bytes("bad café".encode("utf-16"))  # BOM + utf-16-le
    (tmp_path / "pos" / "b.txt").write_bytes(b"\xef\xbb\xbfgood")
    (tmp_path / "pos" / "deep" / "c.txt").write_bytes("好".encode("gb18030"))
    (tmp_path / "pos" / "skip.md").write_text("not a text file here")
    ds = TextFolderDataset.new_classification(tmp_path)
    assert ds.classes == ["neg", "pos"] and len(ds) == 3
    got = [(ds.get(i).text.text, ds.get(i).label) for i in range(3)]
    assert got == [("bad café", 0), ("good", 1), ("好", 1)]
    assert ds.get(0).text.text_path.endswith("neg/a.txt")
    assert read_text(tmp_path / "pos" / "b.txt") == "good"
    ds = TextFolderDataset.new_classification_with(tmp_path, ["md"])
    assert len(ds) == 1 and ds.get(0).label == 1
    items = TextFolderDataset.new_classification_with_items(
        [(tmp_path / "pos" / "b.txt", "pos")], ["neg", "pos"]
    )
    assert items.get(0).label == 1
    with pytest.raises(ValueError, match=r"class 'x' is not one of"):
        TextFolderDataset.new_classification_with_items([(tmp_path / "a.txt", "x")], ["pos"])
    with pytest.raises(ValueError, match=r"no files with extensions \['csv'\]"):
        TextFolderDataset.new_classification_with(tmp_path, ["csv"])
