"""Tests written for mutants of Adam that the suite let survive (tools/mutation): the config's
lower bounds, mismatched lists in `step_many`, and the per-parameter fallback a backend's
refusal of the batched op takes (its results, and the parameter index in its error)."""

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor, TensorCheckError

from burn_optim import AdamConfig, WeightDecayConfig
from burn_optim._adam import Adam


class RefusingNdArray(NdArray):
    """NdArray whose batched Adam refuses every call (as a backend may for operands it cannot
    batch): Adam must fall back to one `adam_update` per parameter."""

    name = "ndarray-refusing-adam-many"

    def float_adam_update_many(self, *args, **kwargs):
        raise TensorCheckError("adam_update_many", "refused by this backend")


@pytest.mark.parametrize(
    "field,value",
    [("beta_1", -0.1), ("beta_2", -0.1), ("epsilon", -1e-8), ("beta_1", 1.0), ("beta_2", 1.0)],
)
def test_adam_refuses_betas_outside_zero_one_and_negative_epsilon(field, value):
    # a beta of 1 never forgets (the moments never move from 0): [0, 1) like Burn
    with pytest.raises(ValueError, match=field):
        AdamConfig(**{field: value}).init()


def test_step_many_refuses_lists_of_different_lengths():
    d = NdArray().device()
    ts = [Tensor.ones([2], d), Tensor.ones([3], d)]
    with pytest.raises(ValueError):  # one state short: the second parameter would be dropped
        Adam().step_many(0.1, ts, list(ts), [None])
    with pytest.raises(ValueError):  # one grad short, with weight decay
        Adam(weight_decay=WeightDecayConfig(0.1)).step_many(0.1, ts, ts[:1], [None, None])


def _params(d, seed):
    rng = np.random.default_rng(seed)
    return [Tensor.from_data(rng.uniform(-2, 2, s), d) for s in [(3,), (2, 2), (4,)]]


def test_a_refused_batch_falls_back_per_parameter_in_every_group():
    d = RefusingNdArray().device()
    rule = Adam()
    ts = _params(d, 0)
    # parameter 0 takes its first step, 1 and 2 their second: two groups, both refused
    _, st = rule.step_many(0.01, ts[1:], _params(d, 1)[1:], [None, None])
    states = [None, *st]
    grads = _params(d, 2)
    news, out = rule.step_many(0.01, ts, grads, states)
    for t, g, s, new, o in zip(ts, grads, states, news, out, strict=True):
        want, want_state = rule.step(0.01, t, g, s)
        np.testing.assert_array_equal(new.numpy(), want.numpy())
        assert o["momentum"]["time"] == want_state["momentum"]["time"]


def test_a_refused_batch_names_the_failing_parameter_by_its_index_in_the_step():
    d = RefusingNdArray().device()
    rule = Adam()
    ts = _params(d, 0)
    _, st = rule.step_many(0.01, ts[1:], _params(d, 1)[1:], [None, None])
    grads = _params(d, 2)
    grads[2] = Tensor.ones([5], d)  # wrong shape for parameter 2 (the second of its group)
    with pytest.raises(Exception) as err:
        rule.step_many(0.01, ts, grads, [None, *st])
    assert err.value.burn_param_index == 2
