"""`python -m burn_import.onnx model.onnx out/`: Burn's ModelGen from the command line."""

from __future__ import annotations

import argparse
import sys

from ._modelgen import ModelGen, RecordType


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m burn_import.onnx",
        description="Generate a burn-py module and record from ONNX files.",
    )
    ap.add_argument("inputs", nargs="+", help="ONNX files")
    ap.add_argument("out_dir", help="output directory")
    ap.add_argument(
        "--record-type",
        default="NamedMpk",
        choices=[r.name for r in RecordType],
        help="record format of the weights (default: NamedMpk)",
    )
    ap.add_argument("--half-precision", action="store_true", help="store the weights as f16")
    ap.add_argument("--class-name", default="Model", help="name of the generated Module class")
    ap.add_argument("--development", action="store_true", help="also write the upgraded graph")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        gen = (
            ModelGen()
            .out_dir(args.out_dir)
            .record_type(RecordType[args.record_type])
            .half_precision(args.half_precision)
            .class_name(args.class_name)
            .development(args.development)
        )
        for path in args.inputs:
            gen.input(path)
        for py in gen.run():
            print(py)
    except ValueError as err:  # OnnxImportError, a refused class name or colliding outputs
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
