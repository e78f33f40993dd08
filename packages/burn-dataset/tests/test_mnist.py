"""MNIST: IDX parsing (gzip and raw), the cache layout, checksummed download, offline errors."""

import functools
import gzip
import hashlib
import http.server
import struct
import threading

import numpy as np
import pytest
from burn_dataset import DownloadError, MnistDataset, MnistItem
from burn_dataset.vision import _mnist, parse_idx, read_idx

CLOSED_PORT_URL = "http://127.0.0.1:9/"  # discard port: nothing listens, connection refused


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch):
    # urllib honours proxy variables; a proxy would turn 127.0.0.1 into a request elsewhere.
    for var in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


def idx_bytes(array, type_code=0x08, dtype=">u1"):
    header = bytes([0, 0, type_code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + np.ascontiguousarray(array, dtype=dtype).tobytes()


def fake_mnist(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), rng.integers(0, 10, n, dtype=np.uint8)


def write_split(directory, prefix, images, labels, compress):
    for kind, array in (("images-idx3", images), ("labels-idx1", labels)):
        name = f"{prefix}-{kind}-ubyte"
        data = idx_bytes(array)
        if compress:
            (directory / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (directory / name).write_bytes(data)


def test_parse_idx_types_and_shapes():
    assert parse_idx(bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 8, 9])).tolist() == [7, 8, 9]
    values = np.array([[-1, 2], [300, -400]], dtype=np.int32)
    parsed = parse_idx(idx_bytes(values, 0x0C, ">i4"))
    assert parsed.dtype == np.int32 and parsed.tolist() == values.tolist()
    floats = parse_idx(idx_bytes(np.array([1.5, -2.0]), 0x0D, ">f4"))
    assert floats.dtype == np.float32 and floats.tolist() == [1.5, -2.0]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x01\x00\x08\x01", "not an IDX file"),
        (bytes([0, 0, 0x07, 1, 0, 0, 0, 1, 5]), "unknown IDX element type 0x07"),
        (bytes([0, 0, 8, 2, 0, 0]), "truncated IDX header"),
        (
            bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 8]),
            r"shape \[3\] of uint8 needs 11 bytes, file has 10",
        ),
    ],
)
def test_parse_idx_errors(data, message):
    with pytest.raises(ValueError, match=message):
        parse_idx(data, "f.idx")


def test_read_idx_gzip_and_raw(tmp_path):
    array = np.arange(6, dtype=np.uint8).reshape(2, 3)
    (tmp_path / "raw").write_bytes(idx_bytes(array))
    (tmp_path / "z.gz").write_bytes(gzip.compress(idx_bytes(array)))
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b garbage")
    assert (
        read_idx(tmp_path / "raw").tolist()
        == read_idx(tmp_path / "z.gz").tolist()
        == array.tolist()
    )
    with pytest.raises(ValueError, match="corrupt gzip data"):
        read_idx(tmp_path / "bad.gz")


def test_from_idx_files_items(tmp_path):
    images, labels = fake_mnist(5, 0)
    write_split(tmp_path, "train", images, labels, compress=False)
    ds = MnistDataset.from_idx_files(
        tmp_path / "train-images-idx3-ubyte", tmp_path / "train-labels-idx1-ubyte"
    )
    item = ds.get(3)
    assert isinstance(item, MnistItem)
    assert item.image.dtype == np.float32 and item.image.shape == (28, 28)
    assert np.array_equal(item.image, images[3].astype(np.float32)) and item.label == int(labels[3])
    assert isinstance(item.label, int) and ds.get(5) is None and len(ds) == 5
    item.image[:] = 0  # a copy: the dataset is unchanged
    assert np.array_equal(ds.get(3).image, images[3])


def test_train_and_test_from_cache_dir_gzip_and_raw(tmp_path):
    tr_images, tr_labels = fake_mnist(7, 1)
    te_images, te_labels = fake_mnist(3, 2)
    write_split(tmp_path, "train", tr_images, tr_labels, compress=True)
    write_split(tmp_path, "t10k", te_images, te_labels, compress=False)
    train = MnistDataset.train(cache_dir=tmp_path, base_url=CLOSED_PORT_URL)  # no download needed
    test = MnistDataset.test(cache_dir=tmp_path, base_url=CLOSED_PORT_URL)
    assert (len(train), len(test)) == (7, 3)
    assert [train.get(i).label for i in range(7)] == tr_labels.tolist()
    assert np.array_equal(test.images, te_images)


def test_shape_errors(tmp_path):
    (tmp_path / "img").write_bytes(idx_bytes(np.zeros((2, 27, 28), np.uint8)))
    (tmp_path / "lbl").write_bytes(idx_bytes(np.zeros(2, np.uint8)))
    (tmp_path / "img28").write_bytes(idx_bytes(np.zeros((3, 28, 28), np.uint8)))
    with pytest.raises(
        ValueError, match=r"expected MNIST images of shape \[N, 28, 28\], got \(2, 27, 28\)"
    ):
        MnistDataset.from_idx_files(tmp_path / "img", tmp_path / "lbl")
    with pytest.raises(ValueError, match=r"expected 3 labels"):
        MnistDataset.from_idx_files(tmp_path / "img28", tmp_path / "lbl")
    with pytest.raises(ValueError, match="split must be 'train' or 'test', got 'valid'"):
        MnistDataset.new("valid", cache_dir=tmp_path)


def test_offline_error_names_files_and_cache_dir(tmp_path):
    cache = tmp_path / "mnist-cache"
    with pytest.raises(DownloadError) as info:
        MnistDataset.train(cache_dir=cache, base_url=CLOSED_PORT_URL)
    message = str(info.value)
    assert "train-images-idx3-ubyte.gz" in message and "train-labels-idx1-ubyte.gz" in message
    assert str(cache) in message and CLOSED_PORT_URL in message
    assert "DigitsDataset" in message
    assert not any(cache.glob("*"))  # no partial downloads left behind


def test_offline_error_via_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_MNIST_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("BURN_DATASET_CACHE_DIR", str(tmp_path))
    with pytest.raises(
        DownloadError, match=r"t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz"
    ):
        MnistDataset.test()
    with pytest.raises(DownloadError, match=str(tmp_path / "mnist")):
        MnistDataset.test()


@pytest.fixture
def local_server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=root)
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


def test_download_verifies_checksums(tmp_path, local_server, monkeypatch):
    served, url = local_server
    images, labels = fake_mnist(4, 3)
    write_split(served, "t10k", images, labels, compress=True)
    md5 = {
        name: hashlib.md5((served / name).read_bytes()).hexdigest()
        for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    }
    # The real checksums would reject our small fake files: a mismatch is an error, no file kept.
    cache = tmp_path / "cache"
    with pytest.raises(
        DownloadError, match="checksum mismatch .* expected md5 9fb629c4189551a2d022fa330f9573f3"
    ):
        MnistDataset.test(cache_dir=cache, base_url=url)
    assert not any(cache.glob("*"))
    monkeypatch.setitem(
        _mnist.MNIST_MD5, "t10k-images-idx3-ubyte.gz", md5["t10k-images-idx3-ubyte.gz"]
    )
    monkeypatch.setitem(
        _mnist.MNIST_MD5, "t10k-labels-idx1-ubyte.gz", md5["t10k-labels-idx1-ubyte.gz"]
    )
    ds = MnistDataset.test(cache_dir=cache, base_url=url)
    assert len(ds) == 4 and np.array_equal(ds.images, images)
    assert sorted(p.name for p in cache.iterdir()) == sorted(md5)
