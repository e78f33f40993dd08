"""Exercise 9 (Step 9, optimizers): one Adam step on the MLP of Exercise 5 (adapted to 2 -> 16
-> 16 -> 2) with one batch of the XOR data of Exercise 8; print the loss before and after.

The mechanics are Burn's: `loss.backward()` -> `GradientsParams.from_grads(grads, model)` ->
`model = optim.step(lr, model, grads)`; no `zero_grad`, the optimizer returns a new model.
"""

from __future__ import annotations

from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder
from burn_ndarray import NdArray
from burn_nn.loss import CrossEntropyLossConfig
from burn_optim import AdamConfig, GradientsParams

from .exercise_05 import Mlp, MlpConfig
from .exercise_08 import XorBatcher, make_random_xor_dataset

LEARNING_RATE = 1e-2


def parameters(model: Mlp) -> dict[str, list]:
    """`{path: nested list}` of every parameter (host copies, for checks)."""
    return {path: param.val().tolist() for path, param in model.named_parameters()}


def run(device=None, seed: int = 9) -> dict[str, object]:
    """Print the loss before and after one step; return both losses, the batch and the
    parameters before and after (nested lists), and the learning rate."""
    device = device if device is not None else Autodiff(NdArray()).device()
    device.seed(seed)

    model = MlpConfig(2, 16, 16, 2).init(device)
    # Burn's AdamConfig::new().with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8)
    #   .with_weight_decay(None).init()
    optim = (
        AdamConfig()
        .with_beta_1(0.9)
        .with_beta_2(0.999)
        .with_epsilon(1e-8)
        .with_weight_decay(None)
        .init()
    )
    loss_fn = CrossEntropyLossConfig().init(device)

    dataloader = (
        DataLoaderBuilder(XorBatcher(device))
        .batch_size(16)
        .shuffle(seed)
        .build(make_random_xor_dataset(200, seed))
    )
    batch = next(iter(dataloader.iter()))
    before_params = parameters(model)

    loss = loss_fn.forward(model.forward(batch.inputs), batch.targets)
    loss_before = float(loss.into_scalar())
    grads = GradientsParams.from_grads(loss.backward(), model)
    model = optim.step(LEARNING_RATE, model, grads)

    # The forward pass again, with the updated model.
    loss_after = float(loss_fn.forward(model.forward(batch.inputs), batch.targets).into_scalar())

    print(f"Batch: inputs {batch.inputs.dims()}, targets {batch.targets.dims()}")
    print(f"Loss before step: {loss_before:.6f}")
    print(f"Loss after step:  {loss_after:.6f}")
    print(f"Loss changed: {loss_after != loss_before}")
    return {
        "loss_before": loss_before,
        "loss_after": loss_after,
        "inputs": batch.inputs.tolist(),
        "targets": batch.targets.tolist(),
        "before": before_params,
        "after": parameters(model),
        "lr": LEARNING_RATE,
    }


if __name__ == "__main__":
    run()
