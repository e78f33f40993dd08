import math

import numpy as np
import pytest

from burn_nn import (
    Constant,
    Initializer,
    KaimingNormal,
    KaimingUniform,
    Normal,
    Ones,
    Orthogonal,
    Uniform,
    XavierNormal,
    XavierUniform,
    Zeros,
)


def sample(init, dev, shape=(200, 300), fi=200, fo=300):
    return init.init_with(list(shape), fi, fo, dev).val().numpy()


def test_constant_ones_zeros(dev64):
    assert (sample(Constant(2.5), dev64, (3, 4)) == 2.5).all()
    assert (sample(Ones(), dev64, (3,)) == 1).all() and (sample(Zeros(), dev64, (3,)) == 0).all()


def test_uniform_and_normal(dev64):
    u = sample(Uniform(-0.5, 2.0), dev64)
    assert u.min() >= -0.5 and u.max() < 2.0 and abs(u.mean() - 0.75) < 0.02
    n = sample(Normal(1.0, 2.0), dev64)
    assert abs(n.mean() - 1.0) < 0.03 and abs(n.std() - 2.0) < 0.03


@pytest.mark.parametrize("fan_out_only", [False, True])
def test_kaiming_uniform_bound(dev64, fan_out_only):
    gain = 1 / math.sqrt(3)
    fan = 300 if fan_out_only else 200
    a = math.sqrt(3) * gain / math.sqrt(fan)
    v = sample(KaimingUniform(gain, fan_out_only), dev64)
    assert v.min() >= -a and v.max() <= a and v.max() > 0.95 * a
    assert abs(v.std() - a / math.sqrt(3)) < 0.02 * a


def test_kaiming_normal_xavier(dev64):
    v = sample(KaimingNormal(2.0, False), dev64)
    assert abs(v.std() - 2.0 / math.sqrt(200)) < 0.01
    a = math.sqrt(3) * 1.5 * math.sqrt(2 / 500)
    xu = sample(XavierUniform(1.5), dev64)
    assert xu.min() >= -a and xu.max() <= a and xu.max() > 0.95 * a
    assert abs(sample(XavierNormal(1.0), dev64).std() - math.sqrt(2 / 500)) < 0.003


def test_orthogonal(dev64):
    w = Orthogonal(2.0).init([4, 3, 2], dev64).val().numpy().reshape(4, 6)
    np.testing.assert_allclose(w @ w.T, 4.0 * np.eye(4), atol=1e-9)
    tall = Orthogonal().init([6, 3], dev64).val().numpy()
    np.testing.assert_allclose(tall.T @ tall, np.eye(3), atol=1e-9)


def test_fans_required(dev64):
    for init in (KaimingUniform(), KaimingNormal(), XavierUniform(), XavierNormal()):
        with pytest.raises(ValueError, match="fan"):
            init.init([2, 2], dev64)


def test_defaults_and_variant_namespace():
    assert KaimingUniform() == Initializer.KaimingUniform(gain=1 / math.sqrt(3), fan_out_only=False)
    assert XavierNormal().gain == 1.0 and Orthogonal().gain == 1.0
