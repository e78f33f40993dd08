"""Muon (Burn's `optim::muon`) against a numpy float64 implementation of the same formulas."""

import numpy as np
import pytest
from burn_nn import ConfigError, Module, Param
from burn_optim import GradientsParams, MomentumConfig, MuonConfig, WeightDecayConfig
from burn_record import BinFileRecorder, DoublePrecisionSettings
from burn_tensor import Tensor

A, B, C = 3.4445, -4.775, 2.0315


def np_orthogonalize(g, steps=5, eps=1e-7):
    tall = g.shape[0] > g.shape[1]
    x = g.T if tall else g
    x = x / max(np.sqrt((x * x).sum()), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = A * x + (B * gram + C * gram @ gram) @ x
    return x.T if tall else x


def np_muon(p, g, s, lr, t, momentum=0.95, dampening=0.0, nesterov=True, wd=0.0, fn="Original"):
    s["v"] = g.copy() if t == 1 else momentum * s["v"] + (1 - dampening) * g
    d = g + momentum * s["v"] if nesterov else s["v"]
    rows, cols = p.shape
    ratio = np.sqrt(max(1.0, rows / cols)) if fn == "Original" else 0.2 * np.sqrt(max(rows, cols))
    return p * (1 - lr * wd) - lr * ratio * np_orthogonalize(d)


class Mat(Module):
    """`x @ w`, `w` a matrix: the 2-D problem Muon is made for."""

    w: Param

    def forward(self, x):
        return x.matmul(self.w.val())


def loss(model, x, y, device):
    diff = model.forward(Tensor.from_data(x, device)) - Tensor.from_data(y, device)
    return (diff * diff).mean()


def np_grad(w, x, y):
    return 2.0 * x.T @ (x @ w - y) / y.size


def setup(device, d_in, d_out, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(d_in, d_out))
    x, y = rng.normal(size=(16, d_in)), rng.normal(size=(16, d_out))
    return Mat(w=Param.from_tensor(Tensor.from_data(w, device))), w, x, y


CASES = [
    ("default-tall", MuonConfig(), {}, (6, 3)),
    ("default-wide", MuonConfig(), {}, (3, 5)),
    (
        "wd-match-rms-plain-momentum",
        MuonConfig(
            weight_decay=WeightDecayConfig(0.1),
            adjust_lr_fn="MatchRmsAdamW",
            momentum=MomentumConfig(momentum=0.9, dampening=0.1, nesterov=False),
        ),
        dict(wd=0.1, fn="MatchRmsAdamW", momentum=0.9, dampening=0.1, nesterov=False),
        (4, 4),
    ),
]


@pytest.mark.parametrize("name,cfg,kw,shape", CASES, ids=[c[0] for c in CASES])
def test_steps_match_numpy(name, cfg, kw, shape, ad64):
    model, w, x, y = setup(ad64, *shape)
    w0 = w.copy()
    optim = cfg.init()
    s = {}
    for t in range(1, 6):
        lr = 0.02 * (1.0 - 0.05 * t)
        grads = GradientsParams.from_grads(loss(model, x, y, ad64).backward(), model)
        model = optim.step(lr, model, grads)
        w = np_muon(w, np_grad(w, x, y), s, lr, t, **kw)
        np.testing.assert_allclose(model.w.val().numpy(), w, rtol=0, atol=1e-10)
    assert np.abs(w - w0).max() > 1e-2


def test_orthogonalization_gives_near_orthogonal_update(ad64):
    """The update's singular values are all near 1 (Muon's point), in ad64 as in numpy."""
    from burn_optim import Muon

    g = np.random.default_rng(1).normal(size=(8, 5))
    rule = MuonConfig().build()
    assert isinstance(rule, Muon)
    o = rule.orthogonalize(Tensor.from_data(g, ad64).inner()).numpy()
    np.testing.assert_allclose(o, np_orthogonalize(g), rtol=0, atol=1e-12)
    sv = np.linalg.svd(o, compute_uv=False)
    assert sv.min() > 0.6 and sv.max() < 1.3, sv


class WithBias(Module):
    w: Param
    b: Param


@pytest.mark.parametrize("shape", [[3], [2, 3, 4]])
def test_non_2d_parameter_is_refused(shape, ad64):
    """Burn's Muon panics on a non-2-D tensor; here a ValueError naming the shape, no state kept."""
    w = Tensor.from_data(np.ones((3, 3)), ad64).require_grad()
    b = Tensor.from_data(np.ones(shape), ad64).require_grad()
    model = WithBias(w=Param.from_tensor(w), b=Param.from_tensor(b))
    lossv = model.w.val().sum() + model.b.val().sum()
    optim = MuonConfig().init()
    dims = ", ".join(map(str, shape))
    with pytest.raises(ValueError, match=rf"2-D parameter, got shape \[{dims}\]") as err:
        optim.step(0.01, model, GradientsParams.from_grads(lossv.backward(), model))
    # the adaptor names the parameter, so a user finds which field to move elsewhere
    assert any(str(model.b.id) in note for note in err.value.__notes__)
    assert len(optim) == 0


def test_float32_steps_track_float64(ad32):
    """On f32 (what GPUs run) five steps stay within 1e-5 of the f64 formulas."""
    model, w, x, y = setup(ad32, 6, 4)
    optim, s = MuonConfig().init(), {}
    for t in range(1, 6):
        grads = GradientsParams.from_grads(loss(model, x, y, ad32).backward(), model)
        model = optim.step(0.02, model, grads)
        w = np_muon(w, np_grad(w, x, y), s, 0.02, t)
    np.testing.assert_allclose(model.w.val().numpy(), w, rtol=0, atol=1e-5)


def test_converges_on_tiny_regression(ad64):
    rng = np.random.default_rng(3)
    w_true = rng.normal(size=(4, 4))
    x = rng.normal(size=(64, 4))
    y = x @ w_true
    model = Mat(w=Param.from_tensor(Tensor.from_data(np.zeros((4, 4)), ad64)))
    optim = MuonConfig().init()
    first = loss(model, x, y, ad64).numpy().item()
    for t in range(300):
        grads = GradientsParams.from_grads(loss(model, x, y, ad64).backward(), model)
        model = optim.step(0.1 * (1 - t / 300), model, grads)
    last = loss(model, x, y, ad64).numpy().item()
    assert last < 1e-2 * first, (first, last)


def test_record_save_load_resumes_bit_for_bit(ad64, tmp_path):
    """The velocity goes through a file (f64 kept) and the resumed step is the uninterrupted one."""
    model, w, x, y = setup(ad64, 5, 3)
    optim = MuonConfig().init()
    for _ in range(2):
        grads = GradientsParams.from_grads(loss(model, x, y, ad64).backward(), model)
        model = optim.step(0.02, model, grads)
    rec = optim.to_record()
    assert list(rec.values())[0]["momentum"]["velocity"].shape.dims == [5, 3]
    BinFileRecorder(DoublePrecisionSettings()).record(rec, tmp_path / "muon")
    resumed = MuonConfig().init().load_record(BinFileRecorder(DoublePrecisionSettings()).load(tmp_path / "muon", ad64))
    grads = GradientsParams.from_grads(loss(model, x, y, ad64).backward(), model)
    a = optim.step(0.02, model, grads)
    grads = GradientsParams.from_grads(loss(model, x, y, ad64).backward(), model)
    b = resumed.step(0.02, model, grads)
    np.testing.assert_array_equal(a.w.val().numpy(), b.w.val().numpy())
    fresh = MuonConfig().init()
    grads = GradientsParams.from_grads(loss(model, x, y, ad64).backward(), model)
    c = fresh.step(0.02, model, grads)
    assert np.abs(c.w.val().numpy() - a.w.val().numpy()).max() > 1e-6


@pytest.mark.parametrize(
    "kw,what",
    [
        (dict(ns_steps=-1), "ns_steps"),
        (dict(ns_steps=2.5), "ns_steps"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(ns_coefficients=(1.0, 2.0)), "ns_coefficients"),
        (dict(adjust_lr_fn="Moonshot"), "adjust_lr_fn"),
    ],
)
def test_bad_config_is_refused(kw, what):
    with pytest.raises(ConfigError, match=what):
        MuonConfig(**kw).init()


def test_config_json_round_trip():
    """Burn's serde names: `adjust_lr_fn` as the enum variant string, coefficients as a list."""
    cfg = MuonConfig(weight_decay=WeightDecayConfig(0.1), adjust_lr_fn="MatchRmsAdamW")
    back = MuonConfig.from_json(cfg.to_json())
    assert back == cfg and back.momentum.nesterov and back.weight_decay.penalty == 0.1
    assert '"adjust_lr_fn": "MatchRmsAdamW"' in cfg.to_json()
