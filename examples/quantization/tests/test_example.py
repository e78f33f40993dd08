"""The quantization example end to end on small slices (CI-quick): rows, sizes, accuracy, for
the guide model and the text-classification transformer, weight-only and with int8 activations."""

from __future__ import annotations

import json

from burn_autodiff import Autodiff
from burn_dataset.transform import PartialDataset
from burn_dataset.vision import DigitsDataset
from burn_ndarray import NdArray
from quantization_example import quantize_and_compare, quantize_and_compare_text, train_quick, train_text
from quantization_example.cli import main

NAMES = ["float32", "int8", "int8+act8", "int4-block64"]


def _dynamic():
    """Where the +act8 rows run: NdArray quantizing the activations of int8 layers on the fly."""
    return NdArray(num_threads=2, quantize_activations=True).device()


def _check(rows, model, acc_floor, q8_tol, q4_tol, q4_ratio):
    assert [(r.model, r.name) for r in rows] == [(model, n) for n in NAMES]
    f32, q8, q8a, q4 = rows
    assert f32.accuracy > acc_floor, f"the float model did not learn ({f32.accuracy:.1f} %)"
    assert abs(q8.accuracy - f32.accuracy) <= q8_tol
    # int8 activations too: the same bound as weight-only int8, and the same (moved, still
    # quantized) weights, so the same record
    assert abs(q8a.accuracy - f32.accuracy) <= q8_tol
    assert q8a.record_bytes == q8.record_bytes and q8a.kept_float == q8.kept_float
    assert abs(q4.accuracy - f32.accuracy) <= q4_tol
    assert f32.record_bytes / q8.record_bytes >= 3.5
    assert f32.record_bytes / q4.record_bytes >= q4_ratio
    return f32, q8, q8a, q4


def test_quantized_guide_keeps_accuracy_and_shrinks_the_record():
    backend = NdArray(num_threads=2)
    train = PartialDataset(DigitsDataset.train(), 0, 400)
    test = PartialDataset(DigitsDataset.test(), 0, 200)
    model = train_quick(Autodiff(backend).device(), train, epochs=2)
    rows = quantize_and_compare(model, backend.device(), test, reps=1, dynamic_device=_dynamic())
    # 200 images: one image is 0.5 points
    _, q8, _, q4 = _check(rows, "guide", 50, 1.0, 3.0, 6.0)
    assert q8.skipped == 0 and q4.skipped == 6  # conv kernels (width 3), small biases, head
    assert set(q4.kept_float) == {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                                  "linear2.weight", "linear2.bias"}  # fmt: skip


def test_quantized_transformer_quantizes_embeddings_and_attention_and_shrinks():
    backend = NdArray(num_threads=2)
    small = {"d_model": 64, "n_heads": 2, "n_layers": 1, "d_ff": 128}  # the real widths, 1 layer
    model, encoded, labels = train_text(backend, 400, 200, 2, max_len=16, lr=3e-3,
                                        model_cfg=small, log=lambda *_: None)  # fmt: skip
    rows = quantize_and_compare_text(model, backend.device(), encoded, labels, reps=1,
                                     dynamic_device=_dynamic())  # fmt: skip
    # 200 sentences: one is 0.5 points
    _, q8, _, q4 = _check(rows, "transformer", 80, 1.5, 3.0, 6.0)
    norms = {f"encoder.layers.0.norm_{i}.{p}" for i in (1, 2) for p in ("gamma", "beta")}
    assert set(q8.kept_float) == norms  # embeddings, every attention projection, feed-forward: int8
    assert set(q4.kept_float) == norms | {"head.weight", "head.bias"}  # 4 classes: no block of 64


def test_cli_json_rows_for_both_models(capsys):
    code = main(["--epochs", "1", "--limit", "64", "--text-train-size", "64",
                 "--text-test-size", "64", "--text-epochs", "1", "--threads", "2", "--json"])  # fmt: skip
    assert code == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [(r["model"], r["name"]) for r in rows] == [(m, n) for m in ("guide", "transformer") for n in NAMES]
    assert all(r["record_bytes"] > 0 and r["ms_per_batch"] > 0 for r in rows)


def test_cli_missing_artifact_is_a_clear_error(tmp_path, capsys):
    assert main(["--artifact-dir", str(tmp_path / "none")]) == 2
    assert "no trained model" in capsys.readouterr().err


def test_gpu_rows_time_the_moved_models_on_the_gpu_device():
    # PoCL stands in for the GPU here (the H200 run uses `--gpu cuda`): float32 and weight-only
    # rows get a GPU time from the model moved there (still quantized), the +act8 row none
    from burn_opencl import OpenCl
    from guide.model import ModelConfig
    from quantization_example.run import SCHEMES

    backend = NdArray(num_threads=2)
    gpu = OpenCl("cpu").device()
    model = ModelConfig(10, 64).init(backend.device())
    test = PartialDataset(DigitsDataset.test(), 0, 8)
    dynamic = NdArray(num_threads=2, quantize_activations=True).device()
    rows = quantize_and_compare(model, backend.device(), test, {"int8": SCHEMES["int8"]}, reps=1,
                                dynamic_device=dynamic, gpu_device=gpu)  # fmt: skip
    assert [(r.name, r.gpu_ms is not None) for r in rows] == [
        ("float32", True), ("int8", True), ("int8+act8", False)]  # fmt: skip
    assert all(r.gpu_ms > 0 for r in rows[:2])
    assert "GPU" in rows[1].row()
