"""The model families of issue 37 built with torch.nn (no torchvision needed) and exported to ONNX.

MobileNet-style depthwise blocks, a ResNet-18-style net, a 2-layer LSTM, a bidirectional GRU and
a small U-Net: the shapes that were slow (grouped convs, recurrent loops) next to plain convs.
"""

from __future__ import annotations

from pathlib import Path


def _families(torch):
    nn = torch.nn

    def dw_block(c_in, c_out, stride):
        return nn.Sequential(
            nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False), nn.BatchNorm2d(c_in),
            nn.ReLU6(), nn.Conv2d(c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU6(),
        )  # fmt: skip

    class MobileNet(nn.Module):
        def __init__(self):
            super().__init__()
            chans = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1),
                     (256, 512, 2)] + [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]  # fmt: skip
            self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU6())
            self.blocks = nn.Sequential(*[dw_block(a, b, s) for a, b, s in chans])
            self.head = nn.Linear(1024, 1000)

        def forward(self, x):
            return self.head(self.blocks(self.stem(x)).mean((2, 3)))

    class Basic(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.c1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(c_out)
            self.c2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(c_out)
            self.down = None
            if stride != 1 or c_in != c_out:
                self.down = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                          nn.BatchNorm2d(c_out))  # fmt: skip

        def forward(self, x):
            y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                      nn.ReLU(), nn.MaxPool2d(3, 2, 1))  # fmt: skip
            layers, c = [], 64
            for c_out, s in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [Basic(c, c_out, s), Basic(c_out, c_out, 1)]
                c = c_out
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            return self.fc(self.layers(self.stem(x)).mean((2, 3)))

    class Lstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(64, 128, num_layers=2, batch_first=True)
            self.fc = nn.Linear(128, 10)

        def forward(self, x):
            return self.fc(self.rnn(x)[0])

    class BiGru(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(64, 128, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(256, 10)

        def forward(self, x):
            return self.fc(self.rnn(x)[0])

    def cbr(a, b):
        return nn.Sequential(nn.Conv2d(a, b, 3, 1, 1), nn.BatchNorm2d(b), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = cbr(3, 16), cbr(16, 32), cbr(32, 64)
            self.u2 = nn.ConvTranspose2d(64, 32, 2, 2)
            self.d2 = cbr(64, 32)
            self.u1 = nn.ConvTranspose2d(32, 16, 2, 2)
            self.d1 = cbr(32, 16)
            self.out = nn.Conv2d(16, 2, 1)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(torch.max_pool2d(a, 2))
            c = self.e3(torch.max_pool2d(b, 2))
            b = self.d2(torch.cat([self.u2(c), b], 1))
            return self.out(self.d1(torch.cat([self.u1(b), a], 1)))

    return {
        "mobilenet_dw": (MobileNet, (1, 3, 224, 224)),
        "resnet18_style": (ResNet18, (1, 3, 224, 224)),
        "lstm_2layer": (Lstm, (1, 50, 64)),
        "gru_bidir": (BiGru, (1, 50, 64)),
        "unet_small": (UNet, (1, 3, 128, 128)),
    }


def export_all(out: Path) -> dict[str, tuple[Path, tuple]]:
    """Export every family (eval mode, seeded, legacy exporter, opset 17) into `out`."""
    import torch

    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, (cls, shape) in _families(torch).items():
        torch.manual_seed(0)
        model = cls().eval()
        path = out / f"{name}.onnx"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            torch.onnx.export(model, torch.randn(shape), str(tmp), opset_version=17, dynamo=False)
            tmp.replace(path)
        files[name] = (path, shape)
    return files
