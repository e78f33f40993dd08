"""Issue 37's real families from torchvision, exported to ONNX as users get them.

resnet18, mobilenet_v3_small, efficientnet_b0, squeezenet1_1, shufflenet_v2_x0_5,
regnet_y_400mf and vit_b_16 with seeded random weights (BatchNorm statistics randomized, and
every all-zero parameter drawn from N(0, 0.02): torchvision zero-initializes ViT's head, whose
logits would then not depend on the network), eval mode, batch 1, torch's legacy exporter at
opset 17 (which folds BatchNorm into Conv, as published files have it). With
`onnxruntime.quantization` importable, resnet18 is also written as onnxruntime's static QDQ
quantization (uint8 activations, int8 weights per channel, 4 seeded calibration images).

Needs torch and torchvision (never dependencies of burn-py): `bench.py --torchvision`.
"""

from __future__ import annotations

from pathlib import Path

NAMES = ("resnet18", "mobilenet_v3_small", "efficientnet_b0", "squeezenet1_1",
         "shufflenet_v2_x0_5", "regnet_y_400mf", "vit_b_16")  # fmt: skip
SHAPE = (1, 3, 224, 224)


def _randomize(torch, model) -> None:
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.normal_(0, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.normal_(1, 0.1)
                mod.bias.normal_(0, 0.1)
        for p in model.parameters():
            if p.abs().max() == 0:
                p.normal_(0, 0.02)


def _qdq(src: Path, dst: Path) -> None:
    import numpy as np
    from onnxruntime.quantization import (
        CalibrationDataReader, QuantFormat, QuantType, quantize_static,
    )  # fmt: skip

    class Images(CalibrationDataReader):
        def __init__(self):
            self.n = 0

        def get_next(self):
            if self.n >= 4:
                return None
            self.n += 1
            x = np.random.default_rng(self.n).standard_normal(SHAPE).astype(np.float32)
            return {"input": x}

    tmp = dst.with_suffix(".tmp")
    quantize_static(str(src), str(tmp), Images(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)  # fmt: skip
    tmp.replace(dst)


def export_torchvision(out: Path, names=NAMES) -> dict[str, tuple[Path, tuple]]:
    """Export the families (cached in `out`); {name: (path, input shape)}."""
    import torch
    import torchvision.models as tvm

    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in names:
        path = out / f"{name}.onnx"
        if not path.exists():
            torch.manual_seed(0)
            model = getattr(tvm, name)().eval()
            _randomize(torch, model)
            tmp = path.with_suffix(".tmp")
            torch.onnx.export(model, (torch.randn(SHAPE),), str(tmp), dynamo=False,
                              opset_version=17, input_names=["input"], output_names=["output"])  # fmt: skip
            tmp.replace(path)
        files[name] = (path, SHAPE)
    try:
        import onnxruntime.quantization  # noqa: F401
    except ImportError:
        return files
    if "resnet18" in files:
        q = out / "resnet18_qdq.onnx"
        if not q.exists():
            _qdq(files["resnet18"][0], q)
        files["resnet18_qdq"] = (q, SHAPE)
    return files
