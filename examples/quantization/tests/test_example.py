"""The quantization example end to end on a small slice (CI-quick): rows, sizes, accuracy."""

from __future__ import annotations

from burn_autodiff import Autodiff
from burn_dataset.transform import PartialDataset
from burn_dataset.vision import DigitsDataset
from burn_ndarray import NdArray
from quantization_example import quantize_and_compare, train_quick
from quantization_example.cli import main


def test_quantized_guide_keeps_accuracy_and_shrinks_the_record():
    backend = NdArray(num_threads=2)
    train = PartialDataset(DigitsDataset.train(), 0, 400)
    test = PartialDataset(DigitsDataset.test(), 0, 200)
    model = train_quick(Autodiff(backend).device(), train, epochs=2)
    dynamic = NdArray(num_threads=2, quantize_activations=True).device()
    rows = quantize_and_compare(model, backend.device(), test, reps=1, dynamic_device=dynamic)
    names = [r.name for r in rows]
    assert names == ["float32", "int8", "int8+act8", "int4-block32"]
    f32, q8, q8a, q4 = rows
    # int8 activations too (quantized on the fly): the same bound as weight-only int8
    assert abs(q8a.accuracy - f32.accuracy) <= 1.0
    assert q8a.record_bytes == q8.record_bytes
    assert f32.accuracy > 50, f"the float model did not learn ({f32.accuracy:.1f} %)"
    assert abs(q8.accuracy - f32.accuracy) <= 1.0  # 200 images: one image is 0.5 points
    assert abs(q4.accuracy - f32.accuracy) <= 3.0
    assert f32.record_bytes / q8.record_bytes >= 3.5
    assert f32.record_bytes / q4.record_bytes >= 5.5
    assert q8.skipped == 0 and q4.skipped == 6  # conv kernels (width 3), small biases, head


def test_cli_missing_artifact_is_a_clear_error(tmp_path, capsys):
    assert main(["--artifact-dir", str(tmp_path / "none")]) == 2
    assert "no trained model" in capsys.readouterr().err
