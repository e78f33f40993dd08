"""Run ONNX's official backend suite (`onnx.backend.test.BackendTest`) through `backend`.

    python -m burn_import.onnx.suite                      # node, light, simple, pytorch on NdArray
    python -m burn_import.onnx.suite --device opencl      # the same on OpenCl(device_type="cpu")
    python -m burn_import.onnx.suite --device cuda        # any backend of the registry
    python -m burn_import.onnx.suite --report onnx_suite_report.md --json results.json
    python -m burn_import.onnx.suite --only-passing results.json --device opencl
    python -m burn_import.onnx.suite --device opencl --workers 2 --expected LIST
    python -m burn_import.onnx.suite --device opencl --workers 2 --write-expected LIST

`--expected` exits 1 naming each case of an expected-pass list (`_suite_expected`) that no
longer passes; `--write-expected` rewrites the list from a full run. Each test case of the
suite is run by the suite's own test function (it calls `prepare`/`run` and compares with
`assert_similar_outputs`); this module only collects pass/fail per case and per op type and
writes the report. The `real` model-zoo tests that need a download are left out
(no network); the 9 `light` models shipped in the wheel are run (kind "light").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import unittest
import warnings

from ._suite_expected import (  # ExpectedListError, Verdict: re-exported for callers
    ExpectedListError,  # noqa: F401
    Verdict,  # noqa: F401
    check_expected,
    format_expected,
    read_expected,
    regenerate_command,
)
from ._suite_results import (  # re-exported: callers read them from the suite module
    KINDS,
    LIGHT_MODELS,
    CaseResult,
    SuiteResult,
    report_markdown,
    summary,
)


def _op_of(model, name: str, singles: dict[str, str]) -> str:
    """The op a node test is about: its one node, or for an `_expanded` test the original's."""
    if model is None:
        return "?"
    ops = [n.op_type for n in model.graph.node]
    if len(set(ops)) == 1:
        return ops[0]
    base = re.sub(r"_expanded(_ver\d+)?$", "", name)
    return singles.get(base, "+".join(sorted(set(ops))[:3]))


_BT = None  # the BackendTest (building it generates every node case: seconds), built once


class _SuiteBackend:
    """Filled in by `_backend()`: a BurnBackend subclass whose device each run sets."""


def _items():
    global _BT, _SuiteBackend
    if _BT is None:
        import onnx.backend.test

        from .backend import BurnBackend

        _SuiteBackend = type("BurnSuiteBackend", (BurnBackend,), {})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _BT = onnx.backend.test.BackendTest(_SuiteBackend, __name__)
    # {category: {name: TestItem}}; onnx's own coverage report reads it the same way
    return _BT._test_items


def run_suite(
    kinds=("node", "light", "simple", "pytorch-converted", "pytorch-operator"),
    device=None,
    include: set[str] | None = None,
    pattern: str | None = None,
    progress: bool = False,
    budget_s: float | None = None,
    shuffle_seed: int | None = None,
    shard: tuple[int, int] | None = None,
) -> SuiteResult:
    """Run the chosen kinds of the official suite; `include` restricts to those case names.

    `budget_s` stops starting new cases once that many seconds have passed (`shuffle_seed`
    then makes the cases that do run a random sample). `shard=(i, n)` runs every n-th case from
    the i-th: n processes with i = 0..n-1 run each case exactly once (`run_parallel`).
    """
    if "ONNX_HOME" not in os.environ:
        # onnx's runner keeps downloaded models there: a private folder of this process, never a
        # predictable shared /tmp path whose planted models the suite would load
        os.environ["ONNX_HOME"] = tempfile.mkdtemp(prefix="burn_onnx_home_")
    from .backend import DeviceDtypeError

    start = time.perf_counter()
    items = _items()
    _SuiteBackend.burn_device = device

    result = SuiteResult()
    singles: dict[str, str] = {}
    work = []
    for kind in kinds:
        for name, item in items.get(KINDS[kind], {}).items():
            if not name.endswith("_cpu"):
                continue
            case = name[: -len("_cpu")]
            if kind == "light" and case[len("test_") :] not in LIGHT_MODELS:
                continue  # the other real models need a download
            if include is not None and case not in include:
                continue
            if pattern and not re.search(pattern, case):
                continue
            work.append((kind, case, item))
    if shard is not None:
        i, n = shard
        work = work[i::n]
    if shuffle_seed is not None:
        import random

        random.Random(shuffle_seed).shuffle(work)
    for kind, case, item in work:
        if budget_s is not None and time.perf_counter() - start > budget_s:
            break
        t0 = time.perf_counter()
        status, msg = "pass", ""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                item.func(None)
        except unittest.SkipTest as err:
            status, msg = "skip", str(err)
        except DeviceDtypeError as err:  # the device, not the importer: reported as a skip
            status, msg = "skip", f"{type(err).__name__}: {err}"
        except (Exception, AssertionError) as err:  # noqa: BLE001 - the report records every failure
            status, msg = (
                "fail",
                f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}",
            )
        model = item.proto[0] if item.proto else None
        op = case[len("test_") :] if kind != "node" else _op_of(model, case, singles)
        if kind == "node" and model is not None and len({n.op_type for n in model.graph.node}) == 1:
            singles[case] = op
        result.cases.append(CaseResult(case, kind, op, status, msg[:300], time.perf_counter() - t0))
        if progress:
            print(f"{status:4} {kind:17} {case} {msg[:100]}", file=sys.stderr)
    resolve_expanded_ops(result.cases, singles)
    result.seconds = time.perf_counter() - start
    return result


def resolve_expanded_ops(cases: list[CaseResult], singles: dict[str, str] | None = None) -> None:
    """Label an `_expanded` node case seen before its base case (or in another shard) with the
    base case's op; `singles` maps single-op case names to their op (default: from `cases`)."""
    if singles is None:
        singles = {c.name: c.op for c in cases if c.kind == "node" and "+" not in c.op}
    for c in cases:
        if c.kind == "node" and "+" in c.op:
            base = re.sub(r"_expanded(_ver\d+)?$", "", c.name)
            c.op = singles.get(base, c.op)


# Options the suite builds a backend with, beyond the registry's defaults: the committed OpenCL
# list is PoCL's, so `opencl` runs on the CPU device type (the same cases on a GPU machine).
SUITE_OPTIONS: dict[str, dict] = {"opencl": {"device_type": "cpu"}}


def suite_backend(name: str):
    """The backend registered as `name` (`burn_tensor.get_backend`), with `SUITE_OPTIONS`.

    Raises SystemExit naming the installed backends when `name` is not one of them, or why the
    backend cannot run here.
    """
    from burn_tensor import BackendError, available_backends, get_backend

    try:
        backend = get_backend(name)
    except BackendError as err:
        raise SystemExit(
            f"--device {name}: {err} (installed backends: {', '.join(available_backends())})"
        ) from None
    options = SUITE_OPTIONS.get(name)
    if options:
        backend = type(backend)(**{**backend.options(), **options})
    return backend


def _device(name: str):
    backend = suite_backend(name)
    return backend.device(), repr(backend)


def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N (two integers), got {text!r}") from None
    if not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"shard {text!r}: need 0 <= I < N")
    return i, n


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m burn_import.onnx.suite",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--device",
        default="ndarray",
        help="registry name of the backend to run on (`python -m burn.backend` lists them)",
    )
    ap.add_argument(
        "--kinds",
        default="node,light,simple,pytorch-converted,pytorch-operator",
        help="comma-separated kinds of ONNX test cases",
    )
    ap.add_argument("--report", help="write the markdown report here")
    ap.add_argument("--json", help="write per-case results as JSON here")
    ap.add_argument("--only-passing", help="run only the cases that passed in this JSON file")
    ap.add_argument(
        "--expected",
        help="an expected-pass list: exit 1 naming every listed case that no longer passes",
    )
    ap.add_argument(
        "--write-expected",
        help="write the cases that pass as the expected-pass list (a full run only: no -k)",
    )
    ap.add_argument("-k", dest="pattern", help="regex on case names")
    ap.add_argument(
        "--shard", type=_shard, help="I/N: run every N-th case from the I-th (0 <= I < N)"
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="run the cases in this many worker processes (shards), results merged",
    )
    ap.add_argument("-v", action="store_true", help="one line per case")
    return ap


def main(argv=None) -> int:
    from burn_record import atomic_write

    args = build_parser().parse_args(argv)
    kinds = tuple(args.kinds.split(","))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise SystemExit(f"unknown kinds {unknown}: choose from {list(KINDS)}")
    partial = args.pattern or args.only_passing or args.shard or set(kinds) != set(KINDS)
    if args.write_expected and partial:
        # a list written from part of the suite would silently drop every case left out
        raise SystemExit("--write-expected needs a full run: no -k/--only-passing/--shard/--kinds")
    if args.workers < 1 or (args.workers > 1 and (args.shard or args.only_passing or args.v)):
        raise SystemExit("--workers N needs N >= 1 and no --shard / --only-passing / -v")
    include = None
    if args.only_passing:
        with open(args.only_passing) as f:
            include = {c["name"] for c in json.load(f)["cases"] if c["status"] == "pass"}
    if args.workers > 1:
        from ._suite_parallel import run_parallel

        dname = repr(suite_backend(args.device))
        res = run_parallel(kinds, args.device, args.workers, args.pattern)
    else:
        device, dname = _device(args.device)
        res = run_suite(kinds, device, include, args.pattern, args.v, shard=args.shard)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report_markdown(res, dname))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res.to_json(), f)
    if args.write_expected:
        header = [
            f"ONNX backend suite: the cases expected to pass on {dname}, kinds {','.join(kinds)}",
            f"(onnx {_onnx_version()}). Regenerate after a change that makes cases pass:",
            regenerate_command(args.device),
        ]
        text = format_expected(res.cases, header).encode()
        # atomic: an interrupted run never leaves a half list (which would read as regressions)
        atomic_write(args.write_expected, lambda f: f.write(text))
    print(summary(res, dname))
    print("failing node op types:", ", ".join(res.failing_ops("node")))
    if args.expected:
        expected = read_expected(args.expected, KINDS)
        if args.pattern or include is not None:  # check only the listed cases this run chose
            expected = {
                n: k
                for n, k in expected.items()
                if (not args.pattern or re.search(args.pattern, n))
                and (include is None or n in include)
            }
        verdict = check_expected(res.cases, expected, kinds)
        print("\n".join(verdict.report(dname, regenerate_command(args.device))))
        for line in verdict.regressions:
            print("REGRESSION", line)
        return 1 if verdict.regressions else 0
    return 0


def _onnx_version() -> str:
    import onnx

    return onnx.__version__


if __name__ == "__main__":
    sys.exit(main())
