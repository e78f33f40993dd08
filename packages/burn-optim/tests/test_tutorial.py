"""The foundations tutorial's Exercise 9 (one optimizer step) and Step 10 (XOR training loop)."""

from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_nn import CrossEntropyLossConfig, LinearConfig, Module, Relu, config
from burn_optim import AdamConfig, GradientsParams, MomentumConfig, SgdConfig
from burn_tensor import Tensor


class XorModel(Module):
    fc1: Module
    fc2: Module
    fc3: Module
    relu: Relu = Relu()

    def forward(self, x: Tensor) -> Tensor:
        x = self.relu.forward(self.fc1.forward(x))
        x = self.relu.forward(self.fc2.forward(x))
        return self.fc3.forward(x)


@config
class XorModelConfig:
    input: int = 2
    hidden: int = 16
    output: int = 2

    def init(self, device) -> XorModel:
        return XorModel(
            fc1=LinearConfig(self.input, self.hidden).init(device),
            fc2=LinearConfig(self.hidden, self.hidden).init(device),
            fc3=LinearConfig(self.hidden, self.output).init(device),
        )


class XorBatcher:
    def __init__(self, device):
        self.device = device

    def batch(self, items, device=None):
        xs = Tensor.from_floats([s[0] for s in items], self.device)
        ys = Tensor.from_ints([s[1] for s in items], self.device)
        return xs, ys


def make_xor_dataset() -> InMemDataset:
    samples = []
    for _ in range(200):
        samples += [([0.0, 0.0], 0), ([0.0, 1.0], 1), ([1.0, 0.0], 1), ([1.0, 1.0], 0)]
    return InMemDataset(samples)


def test_exercise_9_one_step_changes_the_loss():
    device = Autodiff(NdArray()).device()
    device.seed(9)
    model = XorModelConfig().init(device)
    optim = AdamConfig().init()
    # The tutorial's other optimizer spelling must build too.
    SgdConfig().with_momentum(MomentumConfig(momentum=0.9, dampening=0.0, nesterov=False)).init()
    AdamConfig().with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8).with_weight_decay(
        None
    ).init()

    inputs, targets = XorBatcher(device).batch([make_xor_dataset().get(i) for i in range(8)])
    loss_fn = CrossEntropyLossConfig().init(device)
    loss = loss_fn.forward(model.forward(inputs), targets)
    before = loss.into_scalar()
    grads = GradientsParams.from_grads(loss.backward(), model)
    model = optim.step(1e-2, model, grads)
    after = loss_fn.forward(model.forward(inputs), targets).into_scalar()
    assert after != before and after < before


def test_step_10_xor_loop_reaches_full_accuracy():
    device = Autodiff(NdArray()).device()
    device.seed(42)
    lr, num_epochs, batch_size = 1e-3, 50, 32
    model = XorModelConfig().init(device)
    optim = AdamConfig().init()
    loader = (
        DataLoaderBuilder(XorBatcher(device))
        .batch_size(batch_size)
        .shuffle(42)
        .build(make_xor_dataset())
    )
    loss_fn = CrossEntropyLossConfig().init(device)

    test_input = Tensor.from_data(
        [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], NdArray().device()
    )
    losses = []
    for _epoch in range(1, num_epochs + 1):
        epoch_loss, n = 0.0, 0
        for inputs, targets in loader:
            loss = loss_fn.forward(model.forward(inputs), targets)
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(lr, model, grads)
            epoch_loss += loss.into_scalar()
            n += 1
        losses.append(epoch_loss / n)
    # Quick inference check on the inner backend: predictions should be 0, 1, 1, 0.
    classes = model.valid().forward(test_input).argmax(1).reshape([4]).tolist()
    assert classes == [0, 1, 1, 0]
    assert losses[-1] < 0.1 * losses[0], losses[::10]
