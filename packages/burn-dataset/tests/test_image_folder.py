"""ImageFolderDataset: labels from class folders, lazy decoding with Pillow."""

import numpy as np
import pytest
from burn_dataset import ImageDatasetItem, ImageFolderDataset

Image = pytest.importorskip(
    "PIL.Image", reason="Pillow is not installed (install burn-dataset[vision] to run these tests)"
)


def make_tree(root):
    (root / "dog" / "puppies").mkdir(parents=True)
    (root / "cat").mkdir()
    (root / "empty").mkdir()
    Image.fromarray(np.full((4, 5, 3), 200, np.uint8)).save(root / "cat" / "a.png")
    Image.fromarray(np.arange(6, dtype=np.uint8).reshape(2, 3)).save(root / "dog" / "b.PNG")
    Image.fromarray(np.zeros((3, 3, 4), np.uint8)).save(root / "dog" / "puppies" / "c.png")
    (root / "dog" / "notes.txt").write_text("not an image")
    Image.fromarray(np.zeros((2, 2), np.uint8)).save(root / "stray.png")  # not in a class folder


def test_classification_from_folder_names(tmp_path):
    make_tree(tmp_path)
    ds = ImageFolderDataset.new_classification(tmp_path)
    assert ds.classes == ["cat", "dog", "empty"]
    assert len(ds) == 3
    items = list(ds)
    assert all(isinstance(it, ImageDatasetItem) for it in items)
    assert [it.label for it in items] == [0, 1, 1]
    assert [it.annotation.value for it in items] == [0, 1, 1]
    assert [it.image_path.rsplit("/", 2)[-2:] for it in items] == [
        ["cat", "a.png"],
        ["dog", "b.PNG"],
        ["puppies", "c.png"],
    ]
    assert items[0].image.shape == (4, 5, 3) and items[0].image.dtype == np.uint8
    assert np.all(items[0].image == 200)
    assert items[1].image.shape == (2, 3, 1) and items[1].image[..., 0].tolist() == [
        [0, 1, 2],
        [3, 4, 5],
    ]
    assert items[2].image.shape == (3, 3, 4)
    assert ds.get(3) is None


def test_decoding_is_lazy(tmp_path):
    make_tree(tmp_path)
    ds = ImageFolderDataset.new_classification_with(tmp_path, ["png"])
    Image.fromarray(np.full((4, 5, 3), 7, np.uint8)).save(tmp_path / "cat" / "a.png")
    assert np.all(ds.get(0).image == 7)  # read at get(), not at construction


def test_extension_filter_and_explicit_items(tmp_path):
    make_tree(tmp_path)
    Image.fromarray(np.zeros((2, 2, 3), np.uint8)).save(tmp_path / "cat" / "d.bmp")
    assert len(ImageFolderDataset.new_classification_with(tmp_path, [".BMP"])) == 1
    ds = ImageFolderDataset.new_classification_with_items(
        [(tmp_path / "dog" / "b.PNG", "dog"), (tmp_path / "cat" / "a.png", "cat")], ["dog", "cat"]
    )
    assert [it.label for it in ds] == [0, 1] and ds.classes == ["dog", "cat"]


def test_palette_images_become_rgb(tmp_path):
    (tmp_path / "x").mkdir()
    # 51 is in Pillow's default web palette, so the palette round trip is exact
    Image.fromarray(np.full((2, 2, 3), 51, np.uint8)).convert("P").save(tmp_path / "x" / "p.png")
    image = ImageFolderDataset.new_classification(tmp_path).get(0).image
    assert image.shape == (2, 2, 3) and np.all(image == 51)


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a directory"):
        ImageFolderDataset.new_classification(tmp_path / "missing")
    (tmp_path / "cls").mkdir()
    with pytest.raises(
        ValueError, match=r"no images with extensions .* class folders found: \['cls'\]"
    ):
        ImageFolderDataset.new_classification(tmp_path)
    with pytest.raises(ValueError, match="extensions must not be empty"):
        ImageFolderDataset.new_classification_with(tmp_path, [])
    with pytest.raises(ValueError, match=r"class 'bird' is not one of \['cat'\]"):
        ImageFolderDataset.new_classification_with_items([("x.png", "bird")], ["cat"])
    with pytest.raises(ValueError, match="class names must be unique"):
        ImageFolderDataset.new_classification_with_items([], ["a", "a"])


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_undecodable_image_names_its_path(tmp_path, damage):
    from burn_dataset import DatasetError

    (tmp_path / "cat").mkdir()
    path = tmp_path / "cat" / "a.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), np.uint8)).save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"\x89PNG\r\n" + data[40:])
    ds = ImageFolderDataset.new_classification(tmp_path)
    with pytest.raises(DatasetError, match=rf"{path}: cannot decode the image"):
        ds.get(0)
