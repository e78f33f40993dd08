"""Issue 4 "Must show": valid()/no_grad() semantics, bad configs raise clear errors, and the
tutorial's Exercise 7 (CrossEntropyLoss against a manual log-softmax/gather computation)."""

import math

import numpy as np
import pytest
from burn_tensor import Distribution, Tensor
from burn_tensor import activation as A

import burn_nn as nn
from burn_nn import Module
from burn_nn.attention import MhaInput


class Net(Module):
    linear: nn.Linear
    norm: nn.BatchNorm
    dropout: nn.Dropout
    head: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        x = self.linear.forward(x)  # [batch, 4, 3]
        x = self.norm.forward(x.swap_dims(1, 2)).swap_dims(1, 2)
        x = self.dropout.forward(x)
        return self.head.forward(x)


def make_net(device) -> Net:
    return Net(
        linear=nn.LinearConfig(5, 3).init(device),
        norm=nn.BatchNormConfig(3).init(device),
        dropout=nn.DropoutConfig(0.5).init(),
        head=nn.LinearConfig(3, 2).init(device),
    )


def inner_device(autodiff):
    return Tensor.zeros([1], autodiff).inner().device


# -- valid() / no_grad() -------------------------------------------------------------------------


def test_valid_returns_the_module_on_the_inner_backend(autodiff, rng):
    net = make_net(autodiff)
    v = net.valid()
    assert net.devices() == [autodiff]  # the original is untouched
    assert v.devices() == [inner_device(autodiff)]
    assert all(not p.val().device.backend.is_autodiff for p in v.parameters())
    assert not v.norm.running_mean.val().device.backend.is_autodiff
    assert [p.id for p in v.parameters()] == [p.id for p in net.parameters()]
    for p, q in zip(net.parameters(), v.parameters()):
        np.testing.assert_array_equal(p.val().inner().numpy(), q.val().numpy())
    x = rng.normal(size=(2, 4, 5))
    out = v.forward(Tensor.from_data(x, v.devices()[0]))
    assert out.dims() == [2, 4, 2] and not out.device.backend.is_autodiff


def test_valid_dropout_is_the_identity(autodiff, rng):
    drop = nn.DropoutConfig(0.5).init()
    x = np.arange(1.0, 2001.0).reshape(40, 50)
    autodiff.seed(3)
    trained = drop.forward(Tensor.from_data(x, autodiff)).inner().numpy()
    assert (trained == 0).mean() > 0.4  # active on the autodiff device
    v = drop.valid()
    out = v.forward(Tensor.from_data(x, inner_device(autodiff)))
    np.testing.assert_array_equal(out.numpy(), x)
    # inside a whole model: valid() forward equals a numpy float64 forward written here with no
    # dropout and BatchNorm on its running stats (moved off 0/1 by one training step first, so
    # a valid() that used the batch stats or kept dropout's 1/keep scale would differ)
    net = make_net(autodiff)
    net.forward(Tensor.from_data(rng.normal(size=(8, 4, 5)) * 2 + 1, autodiff))
    net = net.valid()
    x = rng.normal(size=(2, 4, 5))
    out = net.forward(Tensor.from_data(x, net.devices()[0])).numpy()
    np.testing.assert_allclose(out, net_reference(net, x), rtol=1e-9, atol=1e-12)


def net_reference(net: Net, x: np.ndarray) -> np.ndarray:
    """`Net.forward` in numpy float64 in eval mode: linear, BatchNorm with the running stats over
    the 3 features (the last axis here), no dropout, linear."""

    def val(p):
        return p.val().numpy().astype(np.float64)

    h = x @ val(net.linear.weight) + val(net.linear.bias)
    rm, rv = val(net.norm.running_mean), val(net.norm.running_var)
    assert not np.allclose(rm, 0.0) and not np.allclose(rv, 1.0)  # the training step moved them
    h = (h - rm) / np.sqrt(rv + net.norm.epsilon) * val(net.norm.gamma) + val(net.norm.beta)
    return h @ val(net.head.weight) + val(net.head.bias)


def test_valid_batchnorm_uses_running_stats(autodiff, rng):
    bn = nn.BatchNormConfig(3, momentum=0.5).init(autodiff)
    x = rng.normal(size=(8, 3, 4)) * 2 + 3
    bn.forward(Tensor.from_data(x, autodiff))  # training: updates the running stats
    rm = 0.5 * x.mean(axis=(0, 2))
    rv = 0.5 + 0.5 * x.var(axis=(0, 2))
    v = bn.valid()
    np.testing.assert_allclose(v.running_mean.val().numpy(), rm, rtol=1e-9)
    np.testing.assert_allclose(v.running_var.val().numpy(), rv, rtol=1e-9)
    y = rng.normal(size=(2, 3, 4))
    out = v.forward(Tensor.from_data(y, v.devices()[0])).numpy()
    ref = (y - rm.reshape(1, 3, 1)) / np.sqrt(rv.reshape(1, 3, 1) + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-12)
    # not the batch statistics, and evaluating does not move the running stats
    batch_ref = (y - y.mean((0, 2), keepdims=True)) / np.sqrt(y.var((0, 2), keepdims=True) + 1e-5)
    assert not np.allclose(out, batch_ref)
    np.testing.assert_allclose(v.running_mean.val().numpy(), rm, rtol=1e-9)


def test_no_grad_keeps_parameters_out_of_the_gradients(autodiff, rng):
    net = make_net(autodiff)
    frozen = Net(linear=net.linear.no_grad(), norm=net.norm, dropout=net.dropout, head=net.head)
    x = Tensor.from_data(rng.normal(size=(2, 4, 5)), autodiff)
    grads = frozen.forward(x).sum().backward()
    for name, p in frozen.named_parameters():
        g = p.val().grad(grads)
        if name.startswith("linear.") or "running_" in name:  # frozen, or BatchNorm state
            assert not p.require_grad and g is None, name
        else:
            assert p.require_grad and g is not None, name
    # the whole model frozen: no parameter gets a gradient, the input still does
    x = Tensor.from_data(rng.normal(size=(2, 4, 5)), autodiff).require_grad()
    all_frozen = net.no_grad()
    grads = all_frozen.forward(x).sum().backward()
    assert all(p.val().grad(grads) is None for p in all_frozen.parameters())
    assert x.grad(grads).dims() == [2, 4, 5]


# -- Exercise 7 ------------------------------------------------------------------------------------


def manual_cross_entropy(logits: Tensor, targets: Tensor) -> Tensor:
    """The tutorial's `manual_cross_entropy`: log-softmax, gather the target's log-prob, -mean."""
    batch = logits.dims()[0]
    log_probs = A.log_softmax(logits, 1)
    picked = log_probs.gather(1, targets.reshape([batch, 1])).reshape([batch])
    return picked.mean().neg()


def manual_cross_entropy_select(logits: Tensor, targets: Tensor) -> Tensor:
    """The same with the tutorial's other hint: a loop of `select` + reshaping."""
    log_probs = A.log_softmax(logits, 1)
    rows = [
        log_probs.select(0, Tensor.from_ints([i], logits.device))
        .select(1, targets.select(0, Tensor.from_ints([i], logits.device)))
        .reshape([1])
        for i in range(logits.dims()[0])
    ]
    return Tensor.cat(rows, 0).mean().neg()


def test_exercise7_cross_entropy_equals_manual_log_softmax_gather(dev64, rng):
    logits = Tensor.random([8, 5], Distribution.normal(0.0, 2.0), dev64)
    targets = Tensor.from_ints(rng.integers(0, 5, size=8), dev64)
    loss = nn.CrossEntropyLossConfig().init(dev64).forward(logits, targets)
    assert loss.dims() == [1]
    manual = manual_cross_entropy(logits, targets)
    assert loss.all_close(manual, rtol=1e-12, atol=1e-12)
    assert loss.all_close(manual_cross_entropy_select(logits, targets), rtol=1e-12, atol=1e-12)
    # and both equal the float64 numpy formula
    x, t = logits.numpy(), targets.numpy()
    lp = x - x.max(1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
    assert math.isclose(loss.item(), -lp[np.arange(8), t].mean(), rel_tol=1e-12)


def test_exercise7_on_float32_default_backend(device, rng):
    logits = Tensor.random([8, 5], Distribution.normal(0.0, 1.0), device)
    targets = Tensor.from_ints(rng.integers(0, 5, size=8), device)
    loss = nn.CrossEntropyLossConfig().init(device).forward(logits, targets)
    assert loss.all_close(manual_cross_entropy(logits, targets), rtol=1e-5, atol=1e-6)


# -- bad configs -------------------------------------------------------------------------------------

ZERO_SIZES = [
    (
        lambda d: nn.LinearConfig(0, 3).init(d),
        r"LinearConfig: d_input must be a positive int, got 0",
    ),
    (
        lambda d: nn.LinearConfig(3, 0).init(d),
        r"LinearConfig: d_output must be a positive int, got 0",
    ),
    (
        lambda d: nn.Conv1dConfig(0, 4, 3).init(d),
        r"Conv1dConfig: channels_in must be a positive int",
    ),
    (
        lambda d: nn.Conv1dConfig(2, 4, 0).init(d),
        r"Conv1dConfig: kernel_size must be a positive int",
    ),
    (
        lambda d: nn.Conv2dConfig([0, 4], [3, 3]).init(d),
        r"Conv2dConfig: channels must be positive ints, got \[0, 4\]",
    ),
    (
        lambda d: nn.Conv2dConfig([2, 0], [3, 3]).init(d),
        r"Conv2dConfig: channels must be positive ints, got \[2, 0\]",
    ),
    (
        lambda d: nn.Conv2dConfig([2, 4], [3, 3], stride=[0, 1]).init(d),
        r"Conv2dConfig: stride must be",
    ),
    (
        lambda d: nn.ConvTranspose1dConfig([4, 0], 3).init(d),
        r"ConvTranspose1dConfig: channels must be",
    ),
    (
        lambda d: nn.ConvTranspose2dConfig([0, 4], [3, 3]).init(d),
        r"ConvTranspose2dConfig: channels must",
    ),
    (
        lambda d: nn.BatchNormConfig(0).init(d),
        r"BatchNormConfig: num_features must be a positive int",
    ),
    (lambda d: nn.LayerNormConfig(0).init(d), r"LayerNormConfig: d_model must be a positive int"),
    (
        lambda d: nn.GroupNormConfig(0, 4).init(d),
        r"GroupNormConfig: num_groups must be a positive int",
    ),
    (
        lambda d: nn.InstanceNormConfig(0).init(d),
        r"InstanceNormConfig: num_channels must be a positive",
    ),
    (lambda d: nn.RmsNormConfig(0).init(d), r"RmsNormConfig: d_model must be a positive int"),
    (
        lambda d: nn.EmbeddingConfig(0, 4).init(d),
        r"EmbeddingConfig: n_embedding must be a positive int",
    ),
    (
        lambda d: nn.lstm.LstmConfig(0, 4, True).init(d),
        r"LstmConfig: d_input must be a positive int",
    ),
    (
        lambda d: nn.lstm.BiLstmConfig(4, 0, True).init(d),
        r"BiLstmConfig: d_hidden must be a positive",
    ),
    (lambda d: nn.gru.GruConfig(4, 0, True).init(d), r"GruConfig: d_hidden must be a positive int"),
    (
        lambda d: nn.attention.MultiHeadAttentionConfig(8, 0).init(d),
        r"MultiHeadAttentionConfig: n_heads must be a positive int, got 0",
    ),
    (
        lambda d: nn.transformer.PositionWiseFeedForwardConfig(8, 0).init(d),
        r"PositionWiseFeedForwardConfig: d_ff must be a positive int",
    ),
]


@pytest.mark.parametrize(
    "build,message",
    ZERO_SIZES,
    ids=[m.split(":")[0] + f"-{i}" for i, (_, m) in enumerate(ZERO_SIZES)],
)
def test_zero_sizes_raise_at_init_naming_the_field(device, build, message):
    with pytest.raises(ValueError, match=message):
        build(device)


@pytest.mark.parametrize(
    "build,op,message",
    [
        (
            lambda d: nn.Conv2dConfig([1, 2], [5, 5]).init(d),
            "conv2d",
            r"kernel \[5, 5\] \(dilation \[1, 1\]\) does not fit input \[3, 3\] with padding \[0, 0\]",
        ),
        (
            lambda d: nn.Conv1dConfig(1, 2, 5).init(d),
            "conv1d",
            r"kernel \[5\] \(dilation \[1\]\) does not fit input \[3\] with padding \[0\]",
        ),
        (
            lambda d: nn.pool.MaxPool2dConfig([5, 5]).init(),
            "max_pool2d",
            r"kernel \[5, 5\] larger than padded input \[3, 3\]",
        ),
        (
            lambda d: nn.pool.AvgPool2dConfig(
                [4, 4], padding=nn.PaddingConfig2d.Explicit(0, 0)
            ).init(),
            "avg_pool2d",
            r"kernel \[4, 4\] larger than padded input \[3, 3\]",
        ),
        (
            lambda d: nn.pool.MaxPool1dConfig(5).init(),
            "max_pool1d",
            r"kernel \[5\] larger than padded input \[3\]",
        ),
        (
            lambda d: nn.pool.AvgPool1dConfig(5).init(),
            "avg_pool1d",
            r"kernel \[5\] larger than padded input \[3\]",
        ),
    ],
)
def test_kernel_larger_than_padded_input_raises_at_forward(device, build, op, message):
    from burn_tensor import TensorCheckError

    module = build(device)
    rank = 4 if "2d" in op else 3
    x = Tensor.ones([1, 1, 3, 3] if rank == 4 else [1, 1, 3], device)
    with pytest.raises(TensorCheckError, match=message) as err:
        module.forward(x)
    assert op in str(err.value)
    # the same kernel fits once the padding makes the input large enough
    if op == "conv2d":
        padded = nn.Conv2dConfig([1, 2], [5, 5], padding=nn.PaddingConfig2d.Explicit(1, 1)).init(
            device
        )
        assert padded.forward(x).dims() == [1, 2, 1, 1]


def test_mismatched_heads_and_d_model_raise(device):
    with pytest.raises(
        ValueError, match=r"MultiHeadAttentionConfig: d_model=10 is not divisible by n_heads=3"
    ):
        nn.attention.MultiHeadAttentionConfig(10, 3).init(device)
    for cfg in (nn.transformer.TransformerEncoderConfig, nn.transformer.TransformerDecoderConfig):
        with pytest.raises(
            ValueError, match=rf"{cfg.__name__}: d_model=10 is not divisible by n_heads=4"
        ):
            cfg(10, 16, 4, 1).init(device)
    mha = nn.attention.MultiHeadAttentionConfig(8, 2).init(device)
    with pytest.raises(
        ValueError,
        match=r"query must be \[batch, seq, d_model=8\] \(2 heads x d_k=4\), "
        r"got \[2, 3, 6\]",
    ):
        mha.forward(MhaInput.self_attn(Tensor.ones([2, 3, 6], device)))
    with pytest.raises(ValueError, match=r"key must be .* got \[2, 3, 5\]"):
        mha.forward(
            MhaInput.new(
                Tensor.ones([2, 3, 8], device),
                Tensor.ones([2, 3, 5], device),
                Tensor.ones([2, 3, 8], device),
            )
        )


def test_unknown_enum_values_raise(device):
    from burn_nn import ConfigError, LinearLayout, Reduction

    # enum-typed config fields given something that is not one of the variants
    with pytest.raises(
        ValueError, match=r"LinearConfig: unknown layout 'Diagonal' \(one of \['Row', 'Col'\]\)"
    ):
        nn.LinearConfig(2, 3, layout="Diagonal").init(device)
    assert nn.LinearConfig(2, 3, layout="Col").init(device).weight.dims() == [3, 2]  # by name: fine
    assert nn.LinearConfig(2, 3, layout=LinearLayout.Col).init(device).weight.dims() == [3, 2]
    with pytest.raises(
        TypeError, match=r"Conv2dConfig: initializer must be an Initializer .*got 'Magic'"
    ):
        nn.Conv2dConfig([1, 2], [3, 3], initializer="Magic").init(device)
    with pytest.raises(
        TypeError, match=r"LinearConfig: initializer must be an Initializer \(Constant, "
    ):
        nn.LinearConfig(2, 3, initializer="KaimingUniform").init(device)
    with pytest.raises(
        TypeError, match=r"PaddingConfig2d: cannot use 'bogus' as padding \(expected "
    ):
        nn.Conv2dConfig([1, 2], [3, 3], padding="bogus").init(device)
    # reductions: a member or its name in any case; anything else is named
    p, y = Tensor.ones([2, 2], device), Tensor.zeros([2, 2], device)
    assert nn.MseLoss().forward(p, y, "batchmean").item() == 2.0
    for bad in ("Median", 3):
        with pytest.raises(
            ValueError, match=rf"unknown reduction {bad!r} \(one of \['Mean', 'Sum', "
        ):
            nn.MseLoss().forward(p, y, bad)
    with pytest.raises(ValueError, match="unknown reduction 'median'"):
        nn.KLDivLossConfig().init().forward(p, y, "median")
    assert Reduction.Sum.name == "Sum"
    # from JSON: unknown variants are named with the field
    with pytest.raises(
        ConfigError, match=r"Conv2dConfig.padding: expected \"Same\", \"Valid\" .* got 'Bogus'"
    ):
        nn.Conv2dConfig.from_json('{"channels": [1, 2], "kernel_size": [3, 3], "padding": "Bogus"}')
    with pytest.raises(ConfigError, match=r"LinearConfig.layout: 'Diagonal' is not a LinearLayout"):
        nn.LinearConfig.from_json('{"d_input": 1, "d_output": 2, "layout": "Diagonal"}')
