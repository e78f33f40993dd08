"""Write `model/guide_digits.onnx` from the guide's trained record, with `onnx.helper`.

    uv run python examples/onnx-inference/export_onnx.py --out /tmp/m       # train, then export
    uv run python examples/onnx-inference/export_onnx.py --artifact-dir artifacts/guide --out /tmp/m

The files go to `--out` (a folder, created if missing). The example's own `model/` folder is
tracked: to regenerate it on purpose, pass `--out examples/onnx-inference/model`.

Without `--artifact-dir` it trains the guide's model (the guide's own `train()`, on the bundled
digits, `hidden_size` 256 so that the file stays under 1 MB) into a temporary artifact directory.
The record is the guide's `CompactRecorder` one (half precision), so the ONNX initializers are
stored as float16 and cast to float32 in the graph: the same numbers the guide's model runs with.
It also writes `model/guide_accuracy.json`: the guide model's own predictions and accuracy on the
360 test digits, which the example must reproduce through the importer.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

#: the tracked model of the example (regenerated only when --out names it)
MODEL_DIR = Path(__file__).resolve().parent / "model"


def train_guide(artifact_dir: str, hidden: int, epochs: int) -> None:
    from burn_autodiff import Autodiff
    from burn_dataset.vision import DigitsDataset
    from burn_ndarray import NdArray
    from burn_optim import AdamConfig
    from guide.model import ModelConfig
    from guide.training import TrainingConfig, train

    config = TrainingConfig(ModelConfig(10, hidden), AdamConfig()).with_num_epochs(epochs)
    train(
        artifact_dir,
        config,
        Autodiff(NdArray()).device(),
        DigitsDataset.train(),
        DigitsDataset.test(),
    )


def to_onnx(model) -> onnx.ModelProto:
    """The guide's forward as an ONNX graph (inference: Dropout is the identity)."""
    p = {name: np.asarray(param.val().numpy()) for name, param in model.named_parameters()}
    inits, nodes = [], []

    def weight(name: str, arr: np.ndarray) -> str:
        inits.append(nh.from_array(arr.astype(np.float16), f"{name}_f16"))
        nodes.append(h.make_node("Cast", [f"{name}_f16"], [name], name=f"{name}_cast", to=T.FLOAT))
        return name

    def layer(op: str, name: str, x: str, y: str):
        """Layer `name` as one `op` node (Conv or Gemm): input `x`, its weight and bias."""
        w = weight(f"{name}.weight", p[f"{name}.weight"])
        b = weight(f"{name}.bias", p[f"{name}.bias"])
        return h.make_node(op, [x, w, b], [y], name=name)

    inits.append(nh.from_array(np.array([1], np.int64), "channel_axis"))
    nodes += [
        h.make_node("Unsqueeze", ["images", "channel_axis"], ["x0"], name="add_channel"),
        layer("Conv", "conv1", "x0", "x1"),
        h.make_node("Dropout", ["x1"], ["x2"], name="dropout1"),
        layer("Conv", "conv2", "x2", "x3"),
        h.make_node("Dropout", ["x3"], ["x4"], name="dropout2"),
        h.make_node("Relu", ["x4"], ["x5"], name="relu1"),
        # AdaptiveAvgPool2d([8, 8]) of a 24x24 map is a 3x3 average pool with stride 3
        h.make_node(
            "AveragePool", ["x5"], ["x6"], name="pool", kernel_shape=[3, 3], strides=[3, 3]
        ),
        h.make_node("Flatten", ["x6"], ["x7"], name="flatten", axis=1),
        # burn's Linear weight is [d_in, d_out]: Gemm without transB
        layer("Gemm", "linear1", "x7", "x8"),
        h.make_node("Dropout", ["x8"], ["x9"], name="dropout3"),
        h.make_node("Relu", ["x9"], ["x10"], name="relu2"),
        layer("Gemm", "linear2", "x10", "logits"),
    ]
    graph = h.make_graph(
        nodes,
        "guide_digits",
        [h.make_tensor_value_info("images", T.FLOAT, ["batch", 28, 28])],
        [h.make_tensor_value_info("logits", T.FLOAT, ["batch", 10])],
        initializer=inits,
    )
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="burn-py guide")
    onnx.checker.check_model(m)
    return m


def guide_accuracy(model, device) -> dict:
    from burn_dataset.vision import DigitsDataset
    from guide.data import MnistBatcher

    test = DigitsDataset.test()
    items = [test.get(i) for i in range(len(test))]
    batch = MnistBatcher(device).batch(items)
    pred = model.forward(batch.images).argmax(1).numpy().reshape(-1)
    labels = np.array([it.label for it in items])
    correct = int((pred == labels).sum())
    return {
        "correct": correct,
        "total": len(items),
        "accuracy": 100.0 * correct / len(items),
        "predictions": pred.tolist(),
    }


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--artifact-dir", help="a trained guide artifact dir (config.json, model.mpk.gz)"
    )
    ap.add_argument(
        "--out",
        required=True,
        type=Path,
        help=f"folder to write guide_digits.onnx and guide_accuracy.json to (the example's "
        f"tracked copy is {MODEL_DIR})",
    )
    ap.add_argument("--hidden", type=int, default=256, help="hidden size of the exported model")
    ap.add_argument(
        "--epochs", type=int, default=12, help="guide training epochs when no --artifact-dir"
    )
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from burn_ndarray import NdArray
    from guide.inference import load_model

    artifact = args.artifact_dir
    if artifact is None:
        artifact = tempfile.mkdtemp(prefix="guide_")
        train_guide(artifact, args.hidden, args.epochs)
    device = NdArray().device()
    model = load_model(artifact, device)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(to_onnx(model), out / "guide_digits.onnx")
    result = guide_accuracy(model, device)
    (out / "guide_accuracy.json").write_text(json.dumps(result, indent=1) + "\n")
    size = (out / "guide_digits.onnx").stat().st_size
    print(
        f"wrote {out / 'guide_digits.onnx'} ({size} bytes); guide accuracy "
        f"{result['correct']}/{result['total']} = {result['accuracy']:.2f}%"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
