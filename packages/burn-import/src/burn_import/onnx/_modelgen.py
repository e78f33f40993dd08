"""`ModelGen`: Burn's `burn_import::onnx::ModelGen` builder (ONNX file -> Python module + record)."""

from __future__ import annotations

import enum
import importlib.util
import os
import sys
import uuid
from pathlib import Path

import numpy as np

from ._codegen import Generated, generate
from ._errors import OnnxImportError
from ._load import load_model


class RecordType(enum.Enum):
    """The record format of the weights file (Burn's `RecordType`)."""

    NamedMpk = "NamedMpkFileRecorder"
    NamedMpkGz = "NamedMpkGzFileRecorder"
    Bincode = "BinFileRecorder"
    PrettyJson = "PrettyJsonFileRecorder"
    Json = "JsonGzFileRecorder"


class ModelGen:
    """Generate a burn-py module (Python source) and its weights record from an ONNX file.

    Example:
        >>> ModelGen().input("model.onnx").out_dir("model/").run()  # doctest: +SKIP
        [PosixPath('model/model.py')]

    Then `from model.model import Model; Model.from_file()` loads it with its weights.
    Options (Burn's): `record_type(RecordType.X)` (NamedMpk default), `half_precision(True)`
    (weights stored as f16), `class_name(...)` (default "Model"), `embed_states` is not needed in
    Python: the record is a file beside the module.
    """

    def __init__(self):
        self._inputs: list[Path] = []
        self._out_dir: Path | None = None
        self._record_type = RecordType.NamedMpk
        self._half = False
        self._class_name = "Model"
        self._development = False

    new = classmethod(lambda cls: cls())

    def input(self, path) -> ModelGen:
        self._inputs.append(Path(os.fspath(path)))
        return self

    def out_dir(self, path) -> ModelGen:
        self._out_dir = Path(os.fspath(path))
        return self

    def record_type(self, record_type: RecordType) -> ModelGen:
        self._record_type = RecordType(record_type)
        return self

    def half_precision(self, half: bool = True) -> ModelGen:
        self._half = bool(half)
        return self

    def class_name(self, name: str) -> ModelGen:
        if not name.isidentifier():
            raise ValueError(f"class_name: {name!r} is not a Python identifier")
        self._class_name = name
        return self

    def development(self, dev: bool = True) -> ModelGen:
        """Also write the upgraded, shape-inferred graph as `<name>.graph.txt` (Burn's option)."""
        self._development = bool(dev)
        return self

    def run(self) -> list[Path]:
        """Generate every input; returns the paths of the written `.py` files."""
        if not self._inputs:
            raise ValueError("ModelGen: no input; call .input('model.onnx')")
        if self._out_dir is None:
            raise ValueError("ModelGen: no output directory; call .out_dir('model/')")
        self._out_dir.mkdir(parents=True, exist_ok=True)
        return [self._one(p) for p in self._inputs]

    run_from_script = run
    run_from_cli = run

    def _one(self, src: Path) -> Path:
        model = load_model(src)
        stem = _module_name(src.stem)
        precision = "HalfPrecisionSettings" if self._half else "FullPrecisionSettings"
        gen = generate(model, self._class_name, src.name, stem, self._record_type.value, precision)
        py = self._out_dir / f"{stem}.py"
        tmp = py.with_suffix(f".py.tmp{uuid.uuid4().hex[:8]}")
        tmp.write_text(gen.source)
        os.replace(tmp, py)
        write_record(gen, py, self._out_dir / stem, self._record_type.value, precision)
        if self._development:
            (self._out_dir / f"{stem}.graph.txt").write_text(str(model.graph))
        return py


def _module_name(stem: str) -> str:
    name = "".join(c if c.isalnum() else "_" for c in stem).lower() or "model"
    return ("m_" + name) if name[0].isdigit() else name


def import_source(py: Path, class_name: str = "Model"):
    """Import a generated module file and return its model class."""
    name = f"_burn_onnx_{py.stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, py)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as err:
        raise OnnxImportError(f"generated code of {py} does not import: {err}") from err
    return getattr(mod, class_name)


def build_module(gen: Generated, cls, device):
    """An instance of the generated class holding the ONNX weights (no file involved)."""
    model = cls.init(device)
    if not gen.record:
        return model
    record = _tensors(gen.record, device)
    return model.load_record(record)


def _tensors(tree, device):
    from burn_tensor import Tensor

    if isinstance(tree, dict):
        return {k: _tensors(v, device) for k, v in tree.items()}
    if tree is None:
        return None
    arr = np.asarray(tree)
    return Tensor.from_data(arr, device, _dtype_of(arr))


def _dtype_of(arr):
    from burn_tensor import DType

    return {
        "float64": DType.F64,
        "float32": DType.F32,
        "float16": DType.F16,
        "int64": DType.I64,
        "int32": DType.I32,
        "int16": DType.I16,
        "int8": DType.I8,
        "uint8": DType.U8,
        "bool": DType.BOOL,
        "uint16": DType.I32,
        "uint32": DType.I64,
        "uint64": DType.I64,
    }[arr.dtype.name]


def write_record(gen: Generated, py: Path, base: Path, recorder: str, precision: str) -> None:
    import burn_record
    from burn_tensor import default_device

    device = default_device()
    cls = import_source(py, gen.class_name)
    model = build_module(gen, cls, device)
    rec = getattr(burn_record, recorder)(getattr(burn_record, precision))
    model.save_file(base, rec)
