"""Train the digits classifier with PyTorch and write the weights this example loads.

Run once, by hand (the example and its tests never import torch):

    cd <worktree> && uv pip install --find-links /opt/wheels torch==2.13.0 safetensors
    uv run --no-sync python examples/import-weights/generate_weights.py

Trains `TorchNet` on burn_dataset's bundled digits (the fixed 1,437-image train split), then
writes `weights/digits_net.pt` (torch.save of the state dict), `weights/digits_net.safetensors`
(safetensors' writer) and `weights/accuracy.json`: PyTorch's accuracy on the 360-image test split
and every prediction, which burn-py must reproduce item by item.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from burn_dataset.vision import DigitsDataset
from safetensors.torch import save_file
from torch import nn

WEIGHTS = Path(__file__).resolve().parent / "weights"
SEED, EPOCHS, BATCH, LR = 0, 10, 64, 3e-3


class TorchNet(nn.Module):
    """conv(1->8) -> BN -> ReLU -> pool 2 -> conv(8->16) -> ReLU -> pool 2 -> Linear(400, 10)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.norm1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.fc = nn.Linear(16 * 5 * 5, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.norm1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def split(dataset) -> tuple[torch.Tensor, torch.Tensor]:
    items = [dataset.get(i) for i in range(len(dataset))]
    images = np.stack([item.image for item in items]).astype(np.float32)[:, None] / 255.0
    return torch.from_numpy(images), torch.tensor([item.label for item in items])


def main() -> None:
    torch.manual_seed(SEED)
    torch.set_num_threads(1)  # reproducible reductions
    train_x, train_y = split(DigitsDataset.train())
    test_x, test_y = split(DigitsDataset.test())
    model = TorchNet()
    optim = torch.optim.Adam(model.parameters(), lr=LR)
    for epoch in range(EPOCHS):
        model.train()
        order = torch.randperm(len(train_x))
        total = 0.0
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            loss = F.cross_entropy(model(train_x[idx]), train_y[idx])
            optim.zero_grad()
            loss.backward()
            optim.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch + 1:2d}: train loss {total / len(order):.4f}")
    model.eval()
    with torch.no_grad():
        predictions = model(test_x).argmax(1)
    correct = int((predictions == test_y).sum())
    accuracy = 100.0 * correct / len(test_y)
    print(f"PyTorch test accuracy: {correct}/{len(test_y)} = {accuracy:.2f} %")

    WEIGHTS.mkdir(exist_ok=True)
    state = model.state_dict()
    torch.save(state, WEIGHTS / "digits_net.pt")
    save_file({k: v.contiguous() for k, v in state.items()}, WEIGHTS / "digits_net.safetensors",
              metadata={"format": "pt"})  # fmt: skip
    result = {
        "torch": torch.__version__,
        "seed": SEED,
        "epochs": EPOCHS,
        "correct": correct,
        "total": len(test_y),
        "accuracy": accuracy,
        "predictions": predictions.tolist(),
    }
    (WEIGHTS / "accuracy.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
