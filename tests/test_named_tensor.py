"""Burn's named-tensor example (its README command, at Burn's sizes): the program runs, the
names follow the ops, the two mistakes Burn's compiler refuses raise TensorCheckError, and the
values are those of the same ops in numpy float64."""

from __future__ import annotations

import numpy as np
from burn_ndarray import NdArray
from named_tensor import run
from named_tensor.cli import main


def test_readme_command_prints_the_four_tensors_and_two_refusals(capsys):
    assert main(["--backend", "ndarray"]) == 0
    out = capsys.readouterr().out
    assert "Output  => NamedTensor[shape=[32, 48, 24], dims=[Batch, SeqLength, DModel]]" in out
    assert "Permut  => NamedTensor[shape=[32, 24, 48], dims=[Batch, DModel, SeqLength]]" in out
    assert "weights.matmul(input) => refused" in out and "output.mul(weights) => refused" in out


def test_values_match_numpy_float64(capsys):
    r = run(NdArray().device(), batch_size=3, seq_length=5, d_model=4)
    w = r["weights"].into_tensor().to_data().numpy().astype(np.float64)
    x = r["input"].into_tensor().to_data().numpy().astype(np.float64)
    want = (x @ w) * x  # weights' batch of 1 broadcasts, as in Burn
    got = r["output"].into_tensor().to_data().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r["permut"].into_tensor().to_data().numpy(), want.swapaxes(1, 2),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    assert "[Batch, DModel, DModel] @ [Batch, SeqLength, DModel]" in r["refused"][0]
    assert "[Batch, SeqLength, DModel] and [Batch, DModel, DModel]" in r["refused"][1]


def test_bad_size_is_a_usage_error(capsys):
    try:
        main(["--d-model", "0"])
    except SystemExit as e:
        assert e.code == 2
    else:
        raise AssertionError("--d-model 0 must be refused")
    assert "--d-model must be >= 1" in capsys.readouterr().err
