"""bfloat16 parameters through the recorders: precision settings store them as the settings'
float type (as Burn's do); loading back into bfloat16 is exact from float32 and float64."""

from __future__ import annotations

import burn_record as br
import numpy as np
import pytest
from burn_tensor import DType, TensorData

ml_dtypes = pytest.importorskip("ml_dtypes")
RECORDERS = [br.NamedMpkFileRecorder, br.BinFileRecorder, br.PrettyJsonFileRecorder]


@pytest.mark.parametrize("recorder", RECORDERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "settings,stored",
    [
        (br.DoublePrecisionSettings, DType.F64),
        (br.FullPrecisionSettings, DType.F32),
        (br.HalfPrecisionSettings, DType.F16),
    ],
)
def test_bf16_params_round_trip(tmp_path, recorder, settings, stored):
    values = np.array([1.5, -2.25, 0.1, 3.0e4], dtype=ml_dtypes.bfloat16)
    item = {"w": br.ParamRecord("w", TensorData(values))}
    rec = recorder(settings)
    loaded = rec.load(rec.record(item, tmp_path / "m"))["w"]
    assert loaded.id == "w" and loaded.dtype is stored
    back = loaded.value.convert("bfloat16")  # what loading into a bf16 module does
    assert back.dtype is DType.BF16
    if stored is not DType.F16:  # bfloat16 values are exact in float32 and float64
        np.testing.assert_array_equal(back.array, values)
