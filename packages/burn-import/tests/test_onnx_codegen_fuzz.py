"""Fuzz of ONNX code generation: hostile names, doc strings and attributes never become code.

Each model (`_onnx_fuzz_models.py`) carries, in every name, doc string, producer, graph name,
file name and string attribute, text that would run `Path(canary).touch()` if it reached Python
source as code. Each one goes through `ModelGen.run()` (which imports the module in this
process) under a hostile file name, every fourth also through `backend.prepare` + `run`; each
generated module is then imported from its file in a child process (`_onnx_fuzz_child.py`,
many modules per child), loaded with its record and run, and its output compared with ONNX's
reference where the template is exact. Printed and asserted: models, canaries (0), crashes of a
child (0), untyped errors (0: every refusal is an `OnnxImportError`), run errors of a module
that imported (0) and wrong results (0).

Profiles: the default runs `CI_MODELS` models with a fixed seed (< 30 s);
`HYPOTHESIS_PROFILE=long` (the switch of every long fuzz profile here, see CONTRIBUTING.md)
runs `LONG_MODELS`. `BURN_ONNX_FUZZ_MODELS=N` / `BURN_ONNX_FUZZ_SEED=S` override both.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import traceback
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from _onnx_fuzz_models import build, file_stem
from burn_import.onnx import ModelGen, OnnxImportError, backend

CI_MODELS, LONG_MODELS = 120, 10_000
SEED = 20_240_531
BATCH = 400  # modules per child process
CHILD = Path(__file__).with_name("_onnx_fuzz_child.py")


def _count() -> int:
    if "BURN_ONNX_FUZZ_MODELS" in os.environ:
        return int(os.environ["BURN_ONNX_FUZZ_MODELS"])
    return LONG_MODELS if os.environ.get("HYPOTHESIS_PROFILE") == "long" else CI_MODELS


def _expected(case) -> list[np.ndarray] | None:
    if case.want is not None or not case.compare:
        return case.want
    from onnx.reference import ReferenceEvaluator

    return [np.asarray(v) for v in ReferenceEvaluator(case.model).run(None, case.feeds)]


def _close(got, want) -> bool:
    return len(got) == len(want) and all(
        np.allclose(np.asarray(g).reshape(np.shape(w)), w, rtol=1e-4, atol=1e-4, equal_nan=True)
        for g, w in zip(got, want)
    )


class Fuzz:
    def __init__(self, work: Path, seed: int):
        self.work, self.rng = work, random.Random(seed)
        self.canaries = work / "canaries"
        self.canaries.mkdir()
        self.counts: Counter = Counter()
        self.problems: list[str] = []
        self.batch: list[dict] = []

    def problem(self, kind: str, i: int, case, what: str) -> None:
        self.counts[kind] += 1
        if len(self.problems) < 20:
            self.problems.append(f"{kind} in model {i} ({case.kind}): {what}")

    def one(self, i: int) -> None:
        canary = str(self.canaries / str(i))
        case = build(self.rng, canary)
        self.counts["models"] += 1
        src = self.work / "in" / str(i) / f"{file_stem(self.rng, canary)}.onnx"
        src.parent.mkdir(parents=True)
        onnx.save(case.model, src)
        try:
            want = _expected(case)
        except Exception:  # noqa: BLE001 - the reference refuses some models; then no comparison
            want = None
        try:
            [py] = ModelGen().input(src).out_dir(self.work / "out" / str(i)).run()
        except OnnxImportError:
            self.counts["refused"] += 1
            return
        except Exception as err:  # noqa: BLE001 - counted: every refusal must be typed
            self.problem("untyped", i, case, traceback.format_exception_only(err)[-1].strip())
            return
        self.counts["imported"] += 1
        if not py.read_bytes().isascii():  # model text reaches source only through safe_text
            self.problem("non-ASCII source", i, case, str(py))
        feeds = list(case.feeds.values())
        if i % 4 == 0:
            self._backend(i, case, feeds, want)
        npz = src.parent / "io.npz"
        arrays = {f"in{k}": a for k, a in enumerate(feeds)}
        arrays.update({f"out{k}": a for k, a in enumerate(want or [])})
        np.savez(npz, **arrays)
        self.batch.append(
            {"id": i, "py": str(py), "npz": str(npz), "n_in": len(feeds),
             "n_out": len(want or []), "kind": case.kind}
        )  # fmt: skip
        if len(self.batch) >= BATCH:
            self.flush()

    def _backend(self, i, case, feeds, want) -> None:
        try:
            got = backend.prepare(case.model).run(feeds)
        except Exception as err:  # noqa: BLE001 - ModelGen imported it: prepare and run must too
            self.problem("run error", i, case, f"backend: {type(err).__name__}: {err}"[:300])
            return
        if want is not None and not _close(got, want):
            self.problem("wrong result", i, case, "backend")

    def flush(self) -> None:
        if not self.batch:
            return
        manifest = self.work / f"batch-{self.counts['batches']}.json"
        self.counts["batches"] += 1
        manifest.write_text(json.dumps(self.batch))
        kinds = {e["id"]: e["kind"] for e in self.batch}
        self.batch = []
        proc = subprocess.run(
            [sys.executable, str(CHILD), str(manifest)],
            capture_output=True, text=True, timeout=1800, cwd=self.work,
        )  # fmt: skip
        seen = 0
        for line in proc.stdout.splitlines():
            res = json.loads(line)
            seen += 1
            case = type("C", (), {"kind": kinds[res["id"]]})
            if "error" in res:
                self.problem("run error", res["id"], case, res["error"])
            elif "wrong" in res:
                self.problem("wrong result", res["id"], case, res["wrong"])
        if proc.returncode != 0 or seen != len(kinds):
            self.counts["crashes"] += 1
            self.problems.append(f"child exited {proc.returncode}: {proc.stderr[-500:]}")

    def report(self) -> str:
        c = self.counts
        canaries = len(list(self.canaries.iterdir()))
        c["canaries"] = canaries
        return (
            f"ONNX codegen fuzz: {c['models']} models ({c['imported']} imported, "
            f"{c['refused']} refused with OnnxImportError), {canaries} canaries, "
            f"{c['crashes']} crashes, {c['untyped']} untyped errors, {c['run error']} run "
            f"errors, {c['wrong result']} wrong results, {c['non-ASCII source']} non-ASCII sources"
        )


def test_hostile_models_never_run_their_text(tmp_path):
    seed = int(os.environ.get("BURN_ONNX_FUZZ_SEED", SEED))
    fuzz = Fuzz(tmp_path, seed)
    for i in range(_count()):
        fuzz.one(i)
    fuzz.flush()
    line = fuzz.report()
    print("\n" + line + "\n" + "\n".join(fuzz.problems))
    c = fuzz.counts
    assert c["models"] == _count() and c["imported"] > c["models"] // 4, line
    assert c["canaries"] == 0 and c["crashes"] == 0 and c["untyped"] == 0, line
    assert c["run error"] == 0 and c["wrong result"] == 0 and c["non-ASCII source"] == 0, (
        line + "\n" + "\n".join(fuzz.problems)
    )
