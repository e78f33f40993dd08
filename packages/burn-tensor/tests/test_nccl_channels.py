"""NCCL's channel cap (`nccl_channel_env`): set before a communicator is made, the user's own
NCCL variable wins, bad values are refused naming the variable. (The communicator itself needs
GPUs: `benches/collective/run_x2.sh channels` measures the effect.)"""

import pytest
from burn_tensor.collective._nccl import CHANNELS_ENV, nccl_channel_env


def test_default_caps_at_8():
    assert nccl_channel_env({}) == {"NCCL_MAX_NCHANNELS": "8"}


def test_burn_variable_sets_the_cap_and_0_leaves_nccls_choice():
    assert nccl_channel_env({CHANNELS_ENV: " 4 "}) == {"NCCL_MAX_NCHANNELS": "4"}
    assert nccl_channel_env({CHANNELS_ENV: "0"}) == {}


def test_users_nccl_variable_wins():
    env = {"NCCL_MAX_NCHANNELS": "32", CHANNELS_ENV: "4"}
    assert nccl_channel_env(env) == {}


@pytest.mark.parametrize("bad", ["-1", "four", "2.5", ""])
def test_bad_values_name_the_variable(bad):
    with pytest.raises(ValueError, match=f"{CHANNELS_ENV} must be a whole number >= 0.*{bad!r}"):
        nccl_channel_env({CHANNELS_ENV: bad})
