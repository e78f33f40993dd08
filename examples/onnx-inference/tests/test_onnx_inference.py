"""The imported ONNX model classifies the test digits exactly as the guide's model did."""

from __future__ import annotations

from burn_ndarray import NdArray
from onnx_inference import MODEL_DIR, classify, guide_result


def test_onnx_file_is_small():
    assert (MODEL_DIR / "guide_digits.onnx").stat().st_size < 1_000_000


def test_accuracy_equals_the_guide_models(tmp_path):
    res = classify(NdArray().device(), out_dir=tmp_path / "generated")
    guide = guide_result()
    assert (tmp_path / "generated/guide_digits.py").is_file()
    assert res.total == guide["total"] == 360
    assert res.correct == guide["correct"]
    assert res.predictions == guide["predictions"]
