"""CifarDataset: the python-pickle batches of CIFAR-10 and CIFAR-100, read from tiny archives
the tests write in that format (a dict of bytes keys with a uint8 [N, 3072] array)."""

import pickle
import tarfile

import numpy as np
import pytest
from burn_dataset import DatasetError, DownloadError
from burn_dataset.vision import CifarDataset, CifarType, Label


def _pickle(path, obj):
    path.write_bytes(pickle.dumps(obj, protocol=2))


def make_cifar10(root, n_per_batch=3):
    """cifar-10-batches-py/ with 5 train batches and a test batch; image k of batch b has
    every red pixel = 10*b + k, green = 100 + k, blue = 200 + k, and label (b + k) % 10."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    names = [f"class{i}".encode() for i in range(10)]
    _pickle(folder / "batches.meta", {b"label_names": names, b"num_cases_per_batch": n_per_batch})
    for b, name in enumerate([f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]):
        data = np.zeros((n_per_batch, 3072), np.uint8)
        for k in range(n_per_batch):
            data[k, :1024], data[k, 1024:2048], data[k, 2048:] = 10 * b + k, 100 + k, 200 + k
        labels = [(b + k) % 10 for k in range(n_per_batch)]
        files = [f"img_{b}_{k}.png".encode() for k in range(n_per_batch)]
        _pickle(folder / name, {b"batch_label": b"x", b"labels": labels, b"data": data,
                                b"filenames": files})  # fmt: skip
    return folder


def test_cifar10_batches_become_images_and_labels(tmp_path):
    make_cifar10(tmp_path)
    ds = CifarDataset(CifarType.Cifar10, root=tmp_path)
    train, test = ds.train(), ds.test()
    assert len(train) == 15 and len(test) == 3 and train.classes[3] == "class3"
    item = train.get(7)  # batch index 2 (data_batch_3), image 1
    assert item.image.shape == (32, 32, 3) and item.image.dtype == np.uint8
    assert (item.image[..., 0] == 21).all() and (item.image[..., 1] == 101).all()
    assert (item.image[..., 2] == 201).all()
    assert item.annotation == Label(3) and item.image_path == "data_batch_3/img_2_1.png"
    assert test.get(2).label == (5 + 2) % 10 and train.get(15) is None
    # items are copies: changing one leaves the dataset as it was
    item.image[:] = 0
    assert (train.get(7).image[..., 0] == 21).all()


def test_cifar10_pixel_order_is_channel_planes_row_major(tmp_path):
    folder = make_cifar10(tmp_path, n_per_batch=1)
    data = np.arange(3072, dtype=np.int64) % 251
    _pickle(folder / "test_batch", {b"labels": [0], b"data": data.astype(np.uint8)[None]})
    image = CifarDataset(CifarType.Cifar10, root=folder).test().get(0).image
    # pixel (row 2, col 5): red at 2*32+5, green at 1024 + that, blue at 2048 + that
    assert list(image[2, 5]) == [(69) % 251, (1024 + 69) % 251, (2048 + 69) % 251]


def test_cifar100_fine_labels(tmp_path):
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    _pickle(folder / "meta", {b"fine_label_names": [f"f{i}".encode() for i in range(100)],
                              b"coarse_label_names": [b"c"] * 20})  # fmt: skip
    for name, labels in (("train", [99, 0, 42]), ("test", [7])):
        data = np.full((len(labels), 3072), 9, np.uint8)
        _pickle(folder / name, {b"fine_labels": labels, b"coarse_labels": [0] * len(labels),
                                b"data": data})  # fmt: skip
    ds = CifarDataset(CifarType.Cifar100, root=tmp_path)
    assert [ds.train().get(i).label for i in range(3)] == [99, 0, 42]
    assert ds.test().get(0).label == 7 and len(ds.classes) == 100 and ds.classes[42] == "f42"


def test_damaged_or_hostile_batches_are_refused(tmp_path):
    folder = make_cifar10(tmp_path)
    _pickle(folder / "data_batch_2", {b"labels": [0, 1], b"data": np.zeros((3, 3072), np.uint8)})
    with pytest.raises(DatasetError, match=r"data_batch_2: 3 images but 2 labels"):
        CifarDataset(CifarType.Cifar10, root=folder).train()
    _pickle(folder / "data_batch_2", {b"labels": [0, 1, 10], b"data": np.zeros((3, 3072), np.uint8)})
    with pytest.raises(DatasetError, match=r"data_batch_2: image 2 has label 10, outside 0..9"):
        CifarDataset(CifarType.Cifar10, root=folder).train()
    _pickle(folder / "data_batch_2", {b"labels": [0], b"data": np.zeros((1, 100), np.uint8)})
    with pytest.raises(DatasetError, match=r"expected data uint8 \[N, 3072\], got uint8 \[1, 100\]"):
        CifarDataset(CifarType.Cifar10, root=folder).train()

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    _pickle(folder / "data_batch_2", {b"labels": Evil()})
    with pytest.raises(DatasetError, match=r"refusing to load global (__builtin__|builtins).print"):
        CifarDataset(CifarType.Cifar10, root=folder).train()
    (folder / "test_batch").write_bytes(b"\x80\x02garbage")
    with pytest.raises(DatasetError, match=r"test_batch: not a CIFAR python batch"):
        CifarDataset(CifarType.Cifar10, root=folder).test()


def test_offline_error_names_the_url(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_DATASET_CACHE_DIR", str(tmp_path))
    with pytest.raises(DownloadError) as info:
        CifarDataset(CifarType.Cifar100, base_url="http://127.0.0.1:9/mirror")
    text = str(info.value)
    assert "http://127.0.0.1:9/mirror/cifar-100-python.tar.gz" in text
    assert str(tmp_path) in text and "offline" in text
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_archive_in_the_cache_is_extracted_once(tmp_path, monkeypatch):
    src = tmp_path / "src"
    make_cifar10(src)
    cache = tmp_path / "cache"
    cache.mkdir()
    with tarfile.open(cache / "cifar-10-python.tar.gz", "w:gz") as tar:
        tar.add(src / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    monkeypatch.setenv("BURN_DATASET_CACHE_DIR", str(cache))
    ds = CifarDataset(CifarType.Cifar10)  # a downloaded archive: no network needed
    assert ds.directory == cache / "cifar-10-batches-py" and len(ds.train()) == 15
    assert sorted(p.name for p in cache.iterdir()) == ["cifar-10-batches-py", "cifar-10-python.tar.gz"]
