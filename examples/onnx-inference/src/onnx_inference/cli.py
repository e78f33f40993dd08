"""`uv run onnx-inference [--backend ndarray|opencl]`: classify the test digits with the imported model."""

from __future__ import annotations

import argparse

from .classify import classify, guide_result


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="onnx-inference", description=__doc__)
    ap.add_argument(
        "--backend", default="ndarray", choices=["ndarray", "opencl"], help="backend to run on"
    )
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.backend == "opencl":
        from burn_opencl import OpenCl

        device = OpenCl(device_type="cpu").device()
    else:
        from burn_ndarray import NdArray

        device = NdArray().device()
    res = classify(device)
    guide = guide_result()
    same = sum(a == b for a, b in zip(res.predictions, guide["predictions"]))
    print(f"imported ONNX model: {res.correct}/{res.total} = {res.accuracy:.2f}%")
    print(f"guide model:         {guide['correct']}/{guide['total']} = {guide['accuracy']:.2f}%")
    print(f"same prediction on {same}/{res.total} items")
    return 0 if res.correct == guide["correct"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
