"""Child process of the ONNX code-generation fuzz: `python _onnx_fuzz_child.py manifest.json`.

For each entry it imports the generated module from its file (as a user would), loads the
record with `Model.from_file`, runs `forward` on the saved inputs and compares the outputs with
the expected ones when there are any. One JSON line per module: `{"id", "error"?, "wrong"?}`.
Importing and running many modules in one process amortizes the interpreter's start.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
from burn_import.onnx._modelgen import _dtype_of
from burn_tensor import Tensor, default_device


def run_one(entry: dict, device) -> dict:
    res = {"id": entry["id"]}
    try:
        spec = importlib.util.spec_from_file_location(f"fuzz_mod_{entry['id']}", entry["py"])
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        model = mod.Model.from_file(device=device)
        with np.load(entry["npz"]) as data:
            ins = [data[f"in{i}"] for i in range(entry["n_in"])]
            want = [data[f"out{i}"] for i in range(entry["n_out"])]
        args = [Tensor.from_data(a.reshape(a.shape or (1,)), device, _dtype_of(a)) for a in ins]
        out = model.forward(*args)
        outs = out if isinstance(out, tuple) else (out,)
        for got, exp in zip(outs, want):
            got = np.asarray(got.numpy()).reshape(exp.shape)
            if not np.allclose(got, exp, rtol=1e-4, atol=1e-4, equal_nan=True):
                res["wrong"] = f"max abs diff {np.nanmax(np.abs(got - exp))}"
    except Exception as err:  # noqa: BLE001 - every failure is reported to the parent
        res["error"] = f"{type(err).__name__}: {err}"[:400]
    return res


def main(manifest: str) -> None:
    device = default_device()
    with open(manifest) as f:
        entries = json.load(f)
    for entry in entries:
        print(json.dumps(run_one(entry, device)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
