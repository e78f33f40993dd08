"""Exercise 11 (Step 11, saving and loading): train the XOR model of Step 10 until it converges,
save it with `CompactRecorder`, load it in a separate function (a fresh model on NdArray, as a
new program run would) and check that its predictions on the four XOR inputs match the ones at
the end of training. Bonus: the same with `NamedMpkFileRecorder(FullPrecisionSettings)`, and the
two file sizes.

`CompactRecorder` writes gzip-compressed named MessagePack in half precision (`.mpk.gz`), as
Burn's; `NamedMpkFileRecorder` writes uncompressed named MessagePack (`.mpk`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from burn_ndarray import NdArray
from burn_record import CompactRecorder, FullPrecisionSettings, NamedMpkFileRecorder
from burn_tensor import Tensor

from .exercise_10 import XOR_INPUTS, XorModel, XorModelConfig, predict, train

#: "Converged": 100 % validation accuracy and a mean epoch loss below this (a margin, so the
#: half-precision weights of CompactRecorder cannot flip a prediction).
TARGET_LOSS = 0.05


def save_model(model: XorModel, path: Path, recorder) -> Path:
    """Save `model` (inner backend) with `recorder`; returns the file written."""
    written = recorder.file_path(path)
    model.save_file(str(path), recorder)
    print(f"Model saved to {written.name} ({written.stat().st_size} bytes).")
    return written


def load_model(path: Path, recorder, device) -> XorModel:
    """A fresh model with random weights, then the saved weights loaded into it."""
    model = XorModelConfig().init(device)
    return model.load_file(str(path), recorder, device)


def logits(model: XorModel, device) -> list[list[float]]:
    return model.forward(Tensor.from_data(XOR_INPUTS, device)).tolist()


def run(directory: str | Path | None = None, seed: int = 42) -> dict[str, object]:
    """Train, save with both recorders in `directory` (a temporary one when None), reload and
    compare; print and return predictions, logits and file sizes."""
    result = train(hidden=16, num_epochs=100, seed=seed, target_loss=TARGET_LOSS)
    trained = result.predictions
    infer_device = NdArray().device()  # "a new program run": plain NdArray, no autodiff

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(directory if directory is not None else tmp)
        compact = CompactRecorder()
        compact_file = save_model(result.model, root / "xor_trained", compact)
        loaded = load_model(root / "xor_trained", compact, infer_device)
        loaded_predictions = predict(loaded, infer_device)

        full = NamedMpkFileRecorder(FullPrecisionSettings)
        full_file = save_model(result.model, root / "xor_trained_full", full)
        loaded_full = load_model(root / "xor_trained_full", full, infer_device)
        full_predictions = predict(loaded_full, infer_device)
        sizes = {"compact": compact_file.stat().st_size, "named_mpk_full": full_file.stat().st_size}

    print(f"Predictions at the end of training:  {trained}")
    print(f"Predictions of the loaded model:      {loaded_predictions}")
    print(f"Match: {loaded_predictions == trained}")
    print(f"NamedMpkFileRecorder<FullPrecisionSettings> model predicts {full_predictions}")
    print(
        f"File sizes: CompactRecorder {sizes['compact']} bytes, "
        f"NamedMpkFileRecorder<FullPrecisionSettings> {sizes['named_mpk_full']} bytes"
    )
    return {
        "trained": trained,
        "loaded": loaded_predictions,
        "loaded_full": full_predictions,
        "trained_logits": logits(result.model, infer_device),
        "loaded_logits": logits(loaded, infer_device),
        "loaded_full_logits": logits(loaded_full, infer_device),
        "num_params": result.model.num_params(),
        "epochs": result.epochs,
        "sizes": sizes,
    }


if __name__ == "__main__":
    run()
