"""Fuzzing config files: a valid config's JSON with bytes flipped, cut, duplicated or replaced
by random text. `Config.load` returns a config or raises ConfigError naming the file; nothing
else escapes. 25 fixed examples per test in CI; `HYPOTHESIS_PROFILE=long`: 10,000 random ones."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from burn_nn import ConfigError, Conv2dConfig, LinearConfig

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
FUZZ = settings(
    max_examples=10_000 if LONG else 25,
    derandomize=not LONG,
    deadline=None if LONG else 5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
VALID = [LinearConfig(3, 4).to_json().encode(), Conv2dConfig([2, 5], [3, 3]).to_json().encode()]
CLASSES = [LinearConfig, Conv2dConfig]


def _load(cls, raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "c.json"
        path.write_bytes(raw)
        try:
            cfg = cls.load(path)
        except ConfigError as err:
            assert str(path) in str(err)
            return
        assert isinstance(cfg, cls)


@FUZZ
@given(
    which=st.integers(0, 1),
    edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=4),
    cut=st.one_of(st.none(), st.floats(0, 1)),
    repeat=st.integers(1, 3),
)
def test_mutated_config_files(which, edits, cut, repeat):
    raw = bytearray(VALID[which])
    for where, byte in edits:
        raw[int(where * len(raw))] = byte
    if cut is not None:
        raw = raw[: int(cut * len(raw))]
    _load(CLASSES[which], bytes(raw) * repeat)


@FUZZ
@given(which=st.integers(0, 1), text=st.one_of(st.binary(max_size=300), st.text(max_size=300)))
def test_random_config_text(which, text):
    _load(
        CLASSES[which], text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    )
