"""Each exercise of the Burn foundations tutorial runs and prints what it asks for.

Every expectation is derived by hand or recomputed here with numpy float64 from the exercise's
inputs (never by calling the code under test twice).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from tutorial import (
    exercise_01,
    exercise_02,
    exercise_03,
    exercise_04,
    exercise_05,
    exercise_06,
    exercise_07,
    exercise_08,
    exercise_09,
    exercise_10,
    exercise_11,
)
from tutorial.cli import main

NUMBER = r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?"


def data_blocks(out: str) -> list[str]:
    """The `data:` part of every tensor printed with Burn's Display."""
    return re.findall(r"data:\n(.*?),\n  shape:", out, flags=re.DOTALL)


def numbers(text: str) -> np.ndarray:
    return np.array([float(x) for x in re.findall(NUMBER, text)])


def line_value(out: str, prefix: str) -> str:
    """The rest of the first printed line starting with `prefix`."""
    return next(line[len(prefix) :] for line in out.splitlines() if line.startswith(prefix))


def params_np(model) -> dict[str, np.ndarray]:
    return {
        path: np.asarray(p.val().tolist(), dtype=np.float64) for path, p in model.named_parameters()
    }


def mlp_np(params: dict[str, np.ndarray], x, names: list[str]) -> np.ndarray:
    """Linear layers `names` (weight `[in, out]`, as Burn) with ReLU between them, float64."""
    h = np.asarray(x, dtype=np.float64)
    for i, name in enumerate(names):
        h = h @ params[f"{name}.weight"] + params[f"{name}.bias"]
        if i < len(names) - 1:
            h = np.maximum(h, 0.0)
    return h


def cross_entropy_np(logits, targets) -> float:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_p[np.arange(len(targets)), targets].mean())


def test_exercise_01_prints_identity_ints_and_mask(capsys):
    identity, ints, mask = exercise_01.run()
    out = capsys.readouterr().out
    blocks = data_blocks(out)
    assert len(blocks) == 3
    assert blocks[0] == "[[1.0, 0.0, 0.0],\n [0.0, 1.0, 0.0],\n [0.0, 0.0, 1.0]]"  # Burn: `1.0`
    assert blocks[1] == "[10, 20, 30]"
    assert blocks[2] == "[[true, false, false],\n [false, true, false],\n [false, false, true]]"
    assert [line.strip() for line in out.splitlines() if "kind:" in line] == [
        'kind:  "Float",',
        'kind:  "Int",',
        'kind:  "Bool",',
    ]
    assert out.count("shape:  [3, 3]") == 2 and out.count("shape:  [3]") == 1
    assert identity.tolist() == np.eye(3).tolist()
    assert ints.tolist() == [10, 20, 30]
    assert mask.tolist() == (np.eye(3) > 0).tolist()


def test_exercise_02_min_max_and_softmax(capsys):
    normalized, soft, reference = exercise_02.run()
    out = capsys.readouterr().out
    blocks = data_blocks(out)
    # (t - 2) / (10 - 2) for t = 2, 4, 6, 8, 10.
    assert numbers(blocks[0]).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert normalized.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]

    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 1.0]])
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(numbers(blocks[1]).reshape(3, 3), expected, atol=1e-4)
    np.testing.assert_allclose(soft.tolist(), expected, atol=1e-6)
    np.testing.assert_allclose(reference.tolist(), expected, atol=1e-6)
    assert line_value(out, "row sums: ") == "[1.0000, 1.0000, 1.0000]"
    assert float(line_value(out, "max |manual - activation::softmax|: ")) < 1e-6


def test_exercise_03_gradient_matches_the_manual_formula(capsys):
    result = exercise_03.run()
    out = capsys.readouterr().out
    # y_hat = 0.5 - 0.6 + 2.4 = 2.3; loss = (2.3 - 2.5)^2 = 0.04; dw = 2 * (-0.2) * [1, 2, 3].
    assert line_value(out, "y_hat = ") == "2.3000"
    assert line_value(out, "loss = ") == "0.0400"
    assert line_value(out, "w = ") == "[0.5, -0.3, 0.8]"
    # Burn's TensorData Display: the f32 values, e.g. [-0.39999962, -0.7999992, -1.1999989].
    np.testing.assert_allclose(numbers(line_value(out, "dw = ")), [-0.4, -0.8, -1.2], atol=1e-5)
    assert line_value(out, "manual 2 * (y_hat - y) * x = ") == "[-0.4000, -0.8000, -1.2000]"
    np.testing.assert_allclose(result["grad"], [-0.4, -0.8, -1.2], atol=1e-5)
    np.testing.assert_allclose(result["manual"], [-0.4, -0.8, -1.2], atol=1e-5)


def test_exercise_04_config_round_trips_through_json(capsys, tmp_path):
    experiment, loaded, text = exercise_04.run(tmp_path)
    out = capsys.readouterr().out
    expected = {"hidden_size": 128, "dropout": 0.3, "activation": "relu", "lr": 1e-4}
    assert json.loads((tmp_path / "experiment.json").read_text()) == expected
    assert json.loads(text) == expected
    assert text in out
    assert "Loaded: hidden_size=128, dropout=0.3, activation='relu', lr=0.0001" in out
    assert "Loaded config matches the saved one." in out
    assert loaded == experiment


def test_exercise_05_mlp_output_shape_and_values(capsys):
    model, batch, output = exercise_05.run()
    out = capsys.readouterr().out
    assert line_value(out, "Input shape: ") == "[16, 10]"
    assert line_value(out, "Output shape: ") == "[16, 3]"
    # (10*64 + 64) + (64*32 + 32) + (32*3 + 3)
    assert line_value(out, "Parameters: ") == str(704 + 2080 + 99)
    expected = mlp_np(params_np(model), batch.tolist(), ["linear1", "linear2", "linear3"])
    np.testing.assert_allclose(output.tolist(), expected, rtol=1e-4, atol=1e-5)
    (block,) = data_blocks(out)  # printed with 4 decimals
    assert re.fullmatch(r"[\[\]\s,-]*(\d+\.\d{4}[\[\]\s,-]*)+", block)
    np.testing.assert_allclose(numbers(block).reshape(16, 3), expected, atol=6e-5)


def test_exercise_06_cnn_shapes(capsys):
    _model, _images, logits = exercise_06.run()
    out = capsys.readouterr().out
    assert line_value(out, "Input shape: ") == "[4, 1, 28, 28]"
    # Same padding keeps 28x28, the 2x2 max pool halves it, the adaptive pool gives 1x1.
    assert line_value(out, "After conv1 + relu + maxpool: ") == "[4, 16, 14, 14]"
    assert line_value(out, "After conv2 + relu + adaptive: ") == "[4, 32, 1, 1]"
    assert line_value(out, "After flatten: ") == "[4, 32]"
    assert line_value(out, "Output shape: ") == "[4, 10]"
    # conv1 1*16*3*3 + 16, conv2 16*32*3*3 + 32, linear 32*10 + 10
    assert line_value(out, "Parameters: ") == str(160 + 4640 + 330)
    assert logits.dims() == [4, 10]


def test_exercise_07_manual_cross_entropy_matches_builtin(capsys):
    result = exercise_07.run()
    out = capsys.readouterr().out
    logits, targets = np.array(result["logits"]), np.array(result["targets"])
    assert logits.shape == (8, 5) and targets.shape == (8,)
    assert targets.min() >= 0 and targets.max() < 5
    assert line_value(out, "targets: ") == str(targets.tolist())
    expected = cross_entropy_np(logits, targets)
    assert float(line_value(out, "CrossEntropyLoss:")) == pytest.approx(expected, abs=2e-6)
    assert float(line_value(out, "manual_cross_entropy:")) == pytest.approx(expected, abs=2e-6)
    assert float(line_value(out, "|difference|: ")) < 1e-5


def test_exercise_08_one_epoch_of_xor_batches(capsys):
    result = exercise_08.run()
    out = capsys.readouterr().out
    dataset = result["dataset"]
    assert line_value(out, "Dataset length: ") == "200"
    items = [dataset.get(i) for i in range(len(dataset))]
    for item in items:
        x1, x2 = item.features
        assert {x1, x2} <= {0.0, 1.0}
        assert item.label == int(x1) ^ int(x2)
    assert len({item.features for item in items}) == 4  # all four patterns occur
    assert line_value(out, "Sample 0: ") == repr(items[0])
    # 200 = 12 * 16 + 8: twelve full batches and a last one of 8.
    batch_lines = [line for line in out.splitlines() if line.startswith("Batch ")]
    expected = [f"Batch {i:>2}: inputs [16, 2], targets [16]" for i in range(12)]
    expected.append("Batch 12: inputs [8, 2], targets [8]")
    assert batch_lines == expected


def test_exercise_09_one_adam_step_changes_the_loss(capsys):
    result = exercise_09.run()
    out = capsys.readouterr().out
    names = ["linear1", "linear2", "linear3"]
    targets = np.array(result["targets"])
    assert line_value(out, "Batch: ") == "inputs [16, 2], targets [16]"
    before = {k: np.array(v) for k, v in result["before"].items()}
    after = {k: np.array(v) for k, v in result["after"].items()}
    loss_before = cross_entropy_np(mlp_np(before, result["inputs"], names), targets)
    loss_after = cross_entropy_np(mlp_np(after, result["inputs"], names), targets)
    assert float(line_value(out, "Loss before step: ")) == pytest.approx(loss_before, abs=2e-6)
    assert float(line_value(out, "Loss after step:  ")) == pytest.approx(loss_after, abs=2e-6)
    assert loss_after != loss_before
    assert line_value(out, "Loss changed: ") == "True"
    # Adam's first step: m_hat = g, v_hat = g^2, so each parameter moves by lr * g / (|g| + eps),
    # at most lr; the output bias always has a gradient, so it moves by ~lr.
    lr = result["lr"]
    for path, value in before.items():
        assert np.abs(after[path] - value).max() <= lr * (1 + 1e-4), path
    moved = np.abs(after["linear3.bias"] - before["linear3.bias"])
    np.testing.assert_allclose(moved, lr, rtol=1e-3)


def test_exercise_10_validation_and_early_stopping(capsys):
    results = exercise_10.run()
    out = capsys.readouterr().out
    xor_inputs = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    assert sorted(results) == [4, 16, 64]
    summary = out.split("Summary")[1]
    for hidden, result in results.items():
        assert result.epochs <= 50
        # Validation accuracy is the share of [0, 1, 1, 0] predicted, recomputed with numpy.
        logits = mlp_np(params_np(result.model), xor_inputs, ["fc1", "fc2", "fc3"])
        predictions = logits.argmax(axis=1).tolist()
        assert predictions == result.predictions
        acc = 100.0 * sum(p == y for p, y in zip(predictions, [0, 1, 1, 0])) / 4
        assert result.accuracies[-1] == acc
        # Early stopping: the loop stops at the first epoch with 100 %.
        assert result.stopped_early == (acc == 100.0)
        assert all(a < 100.0 for a in result.accuracies[:-1])
        status = "reached 100 %" if acc == 100.0 else "did not reach 100 %"
        assert f"hidden {hidden:>2}: {result.epochs:>2} epochs, {acc:.1f} % ({status})" in summary
        if result.stopped_early:
            assert f"Early stop at epoch {result.epochs}: validation accuracy 100 %" in out
    assert results[16].predictions == [0, 1, 1, 0]
    assert out.count("Predictions (should be 0, 1, 1, 0): ") == 3


def test_exercise_11_save_load_predictions_match(capsys, tmp_path):
    result = exercise_11.run(tmp_path)
    out = capsys.readouterr().out
    assert result["trained"] == [0, 1, 1, 0]
    assert result["loaded"] == result["trained"] == result["loaded_full"]
    assert line_value(out, "Predictions at the end of training:  ") == "[0, 1, 1, 0]"
    assert line_value(out, "Predictions of the loaded model:      ") == "[0, 1, 1, 0]"
    assert line_value(out, "Match: ") == "True"
    # CompactRecorder stores f16 (relative error <= 2^-11 per weight); full precision is exact.
    trained = np.array(result["trained_logits"])
    np.testing.assert_allclose(result["loaded_logits"], trained, atol=2e-2)
    np.testing.assert_allclose(result["loaded_full_logits"], trained, rtol=1e-6, atol=1e-6)
    # 2-16-16-2: (2*16 + 16) + (16*16 + 16) + (16*2 + 2) = 354 parameters.
    assert result["num_params"] == 354
    compact = (tmp_path / "xor_trained.mpk.gz").stat().st_size
    full = (tmp_path / "xor_trained_full.mpk").stat().st_size
    assert result["sizes"] == {"compact": compact, "named_mpk_full": full}
    assert full > 354 * 4  # uncompressed f32 weights
    assert compact < full
    assert (
        f"File sizes: CompactRecorder {compact} bytes, "
        f"NamedMpkFileRecorder<FullPrecisionSettings> {full} bytes" in out
    )


def test_cli_runs_one_exercise_and_all(capsys):
    assert main(["3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("=== Exercise 3 ===\n")
    assert "manual 2 * (y_hat - y) * x = [-0.4000, -0.8000, -1.2000]" in out
    assert main(["all"]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("===")] == [
        f"=== Exercise {n} ===" for n in range(1, 12)
    ]


@pytest.mark.parametrize("arg", ["0", "12", "three"])
def test_cli_rejects_unknown_exercises(arg, capsys):
    with pytest.raises(SystemExit) as excinfo:
        main([arg])
    assert excinfo.value.code == 2
    assert "exercise" in capsys.readouterr().err
