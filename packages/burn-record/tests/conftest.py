"""Shared fixtures: a nested item exercising every kind of leaf, and the recorder matrix."""

from __future__ import annotations

import math

import numpy as np
import pytest

import burn_record as br

FILE_RECORDERS = [
    br.NamedMpkFileRecorder,
    br.NamedMpkGzFileRecorder,
    br.NamedMpkZstFileRecorder,
    br.BinFileRecorder,
    br.BinGzFileRecorder,
    br.BinZstFileRecorder,
    br.JsonGzFileRecorder,
    br.PrettyJsonFileRecorder,
    br.CompactRecorder,
    br.DefaultRecorder,
    br.SensitiveCompactRecorder,
]
BYTES_RECORDERS = [br.BinBytesRecorder, br.NamedMpkBytesRecorder]
SETTINGS = [br.DoublePrecisionSettings, br.FullPrecisionSettings, br.HalfPrecisionSettings]


def make_item(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "layers": [
            {
                "weight": br.ParamRecord(f"w{i}", br.TensorData(rng.standard_normal((3, 4)))),
                "bias": br.ParamRecord(
                    f"b{i}", br.TensorData(rng.standard_normal(4).astype(np.float32))
                ),
            }
            for i in range(2)
        ],
        "norm": {
            "gamma": br.ParamRecord("g", br.TensorData(rng.standard_normal(5).astype(np.float16))),
            "beta": None,
        },
        "buffers": (
            br.TensorData(np.arange(-6, 6, dtype=np.int64).reshape(3, 4)),
            br.TensorData(np.array([1, 2, 3], dtype=np.int32)),
            br.TensorData(np.array([0, 255, 7], dtype=np.uint8)),
            br.TensorData(np.array([-3, 4], dtype=np.int8)),
            br.TensorData(np.array([[True, False], [False, True]])),
        ),
        "scalar": br.TensorData(np.array(2.5, dtype=np.float32)),
        "empty": br.TensorData(np.zeros((0, 3), dtype=np.float32)),
        "constants": {
            "step": 7,
            "lr": 1e-3,
            "whole_float": 2.0,
            "flag": True,
            "off": False,
            "name": "adam ✓",
            "nothing": None,
            "big": 2**64 - 1,
            "neg": -(2**63),
            "nested": [(1, [2, (3.0,)]), [], (), {}],
        },
    }


@pytest.fixture
def item() -> dict:
    return make_item()


def assert_identical(a, b, path: str = "") -> None:
    """Deep equality that also tells int from float from bool and tuple from list."""
    # A decoded dict is a br.Record (a dict with attribute access): the same value as a plain dict;
    # test_record_attributes checks that every loader returns Records.
    ta, tb = (dict if type(x) is br.Record else type(x) for x in (a, b))
    assert ta is tb, f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            assert_identical(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_identical(x, y, f"{path}.{i}")
    elif isinstance(a, br.ParamRecord):
        assert a.id == b.id, f"{path}: id {a.id} != {b.id}"
        a.value.assert_eq(b.value, strict=True)
    elif isinstance(a, br.TensorData):
        a.assert_eq(b, strict=True)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), f"{path}: NaN != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def expected_after_save(item, settings):
    """What a record saved with `settings` must load back as: numpy casts by kind, bools kept."""
    if isinstance(item, br.ParamRecord):
        return br.ParamRecord(item.id, expected_after_save(item.value, settings))
    if isinstance(item, br.TensorData):
        arr = item.array
        if arr.dtype.kind == "f":
            return br.TensorData(arr.astype(settings.float_dtype.np))
        if arr.dtype.kind in "iu":
            return br.TensorData(arr.astype(settings.int_dtype.np))
        return item
    if isinstance(item, dict):
        return {k: expected_after_save(v, settings) for k, v in item.items()}
    if isinstance(item, list | tuple):
        return type(item)(expected_after_save(v, settings) for v in item)
    return item


@pytest.fixture
def identical():
    return assert_identical


@pytest.fixture
def expected():
    return expected_after_save


@pytest.fixture(params=FILE_RECORDERS, ids=lambda c: c.__name__)
def file_recorder_cls(request):
    return request.param


@pytest.fixture(params=BYTES_RECORDERS, ids=lambda c: c.__name__)
def bytes_recorder_cls(request):
    return request.param


@pytest.fixture(params=FILE_RECORDERS + BYTES_RECORDERS, ids=lambda c: c.__name__)
def recorder_cls(request):
    return request.param


@pytest.fixture(params=SETTINGS, ids=lambda c: c.__name__)
def settings_cls(request):
    return request.param
