"""ImageFolderDataset beyond classification: multi-label items and segmentation masks
(Burn's `new_multilabel_classification_with_items`, `new_segmentation_with_items`)."""

import numpy as np
import pytest
from burn_dataset import DatasetError
from burn_dataset.vision import ImageFolderDataset, Label, MultiLabel, SegmentationMask

Image = pytest.importorskip(
    "PIL.Image", reason="Pillow is not installed (install burn-dataset[vision] to run these tests)"
)


def test_multilabel_as_in_burn(tmp_path):
    for name in ("orange", "red"):
        (tmp_path / name).mkdir()
        Image.fromarray(np.zeros((2, 2, 3), np.uint8)).save(tmp_path / name / "dot.png")
    items = [
        (tmp_path / "orange" / "dot.png", ["dot", "orange"]),
        (tmp_path / "red" / "dot.png", ["dot", "red"]),
        (tmp_path / "red" / "dot.png", ["red", "dot"]),  # the order given is kept
    ]
    ds = ImageFolderDataset.new_multilabel_classification_with_items(items, ["dot", "orange", "red"])
    assert len(ds) == 3 and ds.get(3) is None
    assert [ds.get(i).annotation for i in range(3)] == [
        MultiLabel((0, 1)), MultiLabel((0, 2)), MultiLabel((2, 0))
    ]
    with pytest.raises(TypeError, match="label is for classification items"):
        _ = ds.get(0).label
    with pytest.raises(ValueError, match=r"classes \['blue'\] are not in"):
        ImageFolderDataset.new_multilabel_classification_with_items(
            [(tmp_path / "red" / "dot.png", ["blue"])], ["dot", "red"]
        )
    with pytest.raises(ValueError, match=r"extension 'txt' is not one of"):
        ImageFolderDataset.new_multilabel_classification_with_items([("a.txt", ["dot"])], ["dot"])


def test_segmentation_masks_gray_16bit_and_rgb(tmp_path):
    Image.fromarray(np.zeros((2, 3, 3), np.uint8)).save(tmp_path / "img.png")
    gray = np.array([[0, 1, 2], [2, 1, 0]], np.uint8)
    Image.fromarray(gray).save(tmp_path / "gray.png")
    Image.fromarray(gray.astype(np.uint16) * 300).save(tmp_path / "deep.png")  # 16-bit gray
    rgb = np.zeros((2, 3, 3), np.uint8)
    rgb[..., 0], rgb[..., 1] = gray, 255  # classes in the red channel, as Burn reads them
    Image.fromarray(rgb).save(tmp_path / "rgb.png")
    ds = ImageFolderDataset.new_segmentation_with_items(
        [(tmp_path / "img.png", tmp_path / m) for m in ("gray.png", "deep.png", "rgb.png")],
        ["bg", "cat", "dog"],
    )
    masks = [ds.get(i).annotation for i in range(3)]
    assert all(isinstance(m, SegmentationMask) for m in masks)
    np.testing.assert_array_equal(masks[0].mask, gray.astype(np.int64))
    np.testing.assert_array_equal(masks[1].mask, gray.astype(np.int64) * 300)
    np.testing.assert_array_equal(masks[2].mask, gray.astype(np.int64))
    assert masks[0].mask.dtype == np.int64 and masks[0] == masks[2]
    assert ds.get(0).image.shape == (2, 3, 3)


def test_segmentation_errors_name_the_files(tmp_path):
    Image.fromarray(np.zeros((2, 3, 3), np.uint8)).save(tmp_path / "img.png")
    Image.fromarray(np.zeros((3, 3), np.uint8)).save(tmp_path / "tall.png")
    ds = ImageFolderDataset.new_segmentation_with_items(
        [(tmp_path / "img.png", tmp_path / "tall.png")], ["bg"]
    )
    with pytest.raises(DatasetError, match=r"tall.png: mask is 3x3 \(HxW\) but its image .*img.png is 2x3"):
        ds.get(0)
    with pytest.raises(FileNotFoundError, match=r"segmentation mask not found: .*none.png"):
        ImageFolderDataset.new_segmentation_with_items([(tmp_path / "img.png", tmp_path / "none.png")], ["bg"])
    (tmp_path / "bad.png").write_bytes(b"\x89PNG broken")
    ds = ImageFolderDataset.new_segmentation_with_items(
        [(tmp_path / "img.png", tmp_path / "bad.png")], ["bg"]
    )
    with pytest.raises(DatasetError, match=r"bad.png: cannot decode the mask"):
        ds.get(0)


def test_classification_items_are_still_labels(tmp_path):
    (tmp_path / "a").mkdir()
    Image.fromarray(np.zeros((2, 2, 3), np.uint8)).save(tmp_path / "a" / "x.png")
    item = ImageFolderDataset.new_classification(tmp_path).get(0)
    assert item.annotation == Label(0) and item.label == 0
