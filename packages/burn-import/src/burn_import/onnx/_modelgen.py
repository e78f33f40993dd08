"""`ModelGen`: Burn's `burn_import::onnx::ModelGen` builder (ONNX file -> Python module + record)."""

from __future__ import annotations

import enum
import os
import sys
import types
import uuid
from pathlib import Path

import numpy as np

from ._codegen import Generated, generate
from ._errors import OnnxImportError
from ._load import load_model
from ._names import check_class_name, module_stem


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
        """The generated class's name: a plain ASCII identifier that is no keyword, builtin or
        name the generated module uses itself (`ops`, `Module`, `Tensor`, ...)."""
        self._class_name = check_class_name(name)
        return self

    def development(self, dev: bool = True) -> ModelGen:
        """Also write the upgraded, shape-inferred graph as `<name>.graph.txt` (Burn's option)."""
        self._development = bool(dev)
        return self

    def run(self) -> list[Path]:
        """Generate every input; returns the paths of the written `.py` files.

        Output names come from the input stems (`_names.module_stem`); two inputs whose stems
        give the same module name are refused before anything is written. A module is written
        only after it imported and its record was written, so a failed input leaves nothing.
        """
        if not self._inputs:
            raise ValueError("ModelGen: no input; call .input('model.onnx')")
        if self._out_dir is None:
            raise ValueError("ModelGen: no output directory; call .out_dir('model/')")
        stems: dict[str, Path] = {}
        for p in self._inputs:
            stem = module_stem(p.stem)
            if stem in stems:
                raise ValueError(
                    f"ModelGen: inputs {str(stems[stem])!r} and {str(p)!r} would both be written "
                    f"as module {stem!r}; rename one"
                )
            stems[stem] = p
        self._out_dir.mkdir(parents=True, exist_ok=True)
        return [self._one(p, stem) for stem, p in stems.items()]

    run_from_script = run
    run_from_cli = run

    def _one(self, src: Path, stem: str) -> Path:
        from burn_record import atomic_write

        model = load_model(src)
        precision = "HalfPrecisionSettings" if self._half else "FullPrecisionSettings"
        gen = generate(model, self._class_name, src.name, stem, self._record_type.value, precision)
        py = self._out_dir / f"{stem}.py"
        record = write_record(gen, py, self._out_dir / stem, self._record_type.value, precision)
        graph_txt = self._out_dir / f"{stem}.graph.txt"
        try:
            if self._development:
                graph = str(model.graph).encode("utf-8", "replace")
                atomic_write(graph_txt, lambda f: f.write(graph))
            atomic_write(py, lambda f: f.write(gen.source.encode("utf-8")))
        except BaseException:
            for path in (record, graph_txt):
                path.unlink(missing_ok=True)
            raise
        return py


def exec_source(source: str, class_name: str, filename: str | None = None, register=False):
    """Run generated source as a fresh module and return its class; any failure (it does not
    compile, or raises while running) is an `OnnxImportError`. `filename` is the module's
    `__file__` (the record is found beside it); `register` puts it in `sys.modules` (burn_nn
    resolves field annotations there) until the caller pops it."""
    name = f"_burn_onnx_gen_{uuid.uuid4().hex[:10]}"
    where = filename or f"<generated {name}>"
    try:
        code = compile(source, where, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise OnnxImportError(f"generated code of {where} does not compile: {err}") from None
    mod = types.ModuleType(name)
    mod.__file__ = where
    if register:
        sys.modules[name] = mod
    try:
        exec(code, mod.__dict__)  # noqa: S102 - checked by _verify; no model text is code
        return mod.__dict__[class_name]
    except Exception as err:
        sys.modules.pop(name, None)
        raise OnnxImportError(f"generated code of {where} does not import: {err}") from err


def build_module(gen: Generated, cls, device):
    """An instance of the generated class holding the ONNX weights (no file involved); a layer
    that cannot be built from the model's values (e.g. channels not divisible by the groups)
    is an `OnnxImportError`."""
    try:
        model = cls.init(device)
        if not gen.record:
            return model
        return model.load_record(_tensors(gen.record, device))
    except OnnxImportError:
        raise
    except Exception as err:
        raise OnnxImportError(f"the generated module cannot be built: {err}") from err


def _tensors(tree, device):
    from burn_tensor import Tensor
    from burn_tensor.quantization import QuantizedData

    if isinstance(tree, dict):
        return {k: _tensors(v, device) for k, v in tree.items()}
    if tree is None:
        return None
    if isinstance(tree, QuantizedData):  # a quantized weight: integers and scales as they are
        return Tensor.from_quantized_data(tree, device)
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


def write_record(gen: Generated, py: Path, base: Path, recorder: str, precision: str) -> Path:
    """Import the generated source (as the module `py` will be) and write its record at `base`
    (the recorder adds its extension); returns the record's path. Nothing is written when the
    module does not import or its weights do not fit it."""
    import burn_record
    from burn_tensor import default_device

    device = default_device()
    cls = exec_source(gen.source, gen.class_name, str(py), register=True)
    try:
        model = build_module(gen, cls, device)
    finally:
        sys.modules.pop(cls.__module__, None)
    rec = getattr(burn_record, recorder)(getattr(burn_record, precision))
    return Path(model.save_file(base, rec))
