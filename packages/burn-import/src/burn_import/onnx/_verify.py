"""A last check of generated source before it is compiled or written: its syntax tree has only
the shape the generator writes, so model text that slipped into code by a converter's mistake
is refused (`OnnxImportError`) instead of being run.

The generator never pastes model text into code (`_names`, `_context.lit`); this check is the
second wall. It parses the source (no execution) and requires:
- at module level only the docstring, the known imports, `RECORD = ...` and the class;
- every name read is an import, a variable the code binds, or one of a few builtins;
- no attribute starting with `_` (`__class__`, `__globals__`, ...) or in `DENIED_ATTRS`, and
  on the imported modules (`ops`, `activation`, `F`, `pathlib`) only their functions/classes;
- no lambda, global, import inside the class, f-string, with, try, del or walrus.
"""

from __future__ import annotations

import ast
import functools
import inspect

from ._errors import OnnxImportError

SAFE_BUILTINS = frozenset(
    {"int", "float", "bool", "range", "len", "list", "tuple", "min", "max", "abs", "classmethod",
     "__file__"}
)  # fmt: skip
# Calls that touch files or processes: never in generated code, whatever object they are on.
DENIED_ATTRS = frozenset(
    {"system", "popen", "spawn", "fork", "exec", "eval", "compile", "tofile", "dump", "dumps",
     "loads", "open", "write", "write_text", "write_bytes", "unlink", "remove", "rmdir", "touch",
     "mkdir", "rename", "chmod", "symlink_to", "rmtree", "import_module", "getattr", "setattr"}
)  # fmt: skip
DENIED_NODES = (
    ast.Lambda, ast.Global, ast.Nonlocal, ast.Delete, ast.With, ast.AsyncWith, ast.Try,
    ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.AsyncFunctionDef, ast.AsyncFor,
    ast.JoinedStr, ast.FormattedValue, ast.Raise, ast.Assert,
)  # fmt: skip
IMPORTS = {
    "__future__": {"annotations"},
    "burn_tensor": {"DType", "Tensor", "activation", "default_device", "module"},
    "burn_nn": {
        "Module", "Param", "BatchNorm", "BatchNormConfig", "Conv1d", "Conv1dConfig", "Conv2d",
        "Conv2dConfig", "ConvTranspose2d", "ConvTranspose2dConfig", "Embedding", "EmbeddingConfig",
        "GroupNorm", "GroupNormConfig", "LayerNorm", "LayerNormConfig", "Linear", "LinearConfig",
        "PaddingConfig1d", "PaddingConfig2d", "BiLstm", "BiLstmConfig", "Gru", "GruConfig",
        "Lstm", "LstmConfig", "MhaInput", "MultiHeadAttention", "MultiHeadAttentionConfig",
    },
    "burn_record": {
        "NamedMpkFileRecorder", "NamedMpkGzFileRecorder", "BinFileRecorder",
        "PrettyJsonFileRecorder", "JsonGzFileRecorder", "FullPrecisionSettings",
        "HalfPrecisionSettings", "DoublePrecisionSettings",
    },
    "burn_import.onnx": {"ops"},
}  # fmt: skip
# Module objects the generated code reaches attributes of: `ops.pad`, `F.max_pool2d`, ...
MODULE_OBJECTS = {
    "ops": "burn_import.onnx.ops",
    "activation": "burn_tensor.activation",
    "F": "burn_tensor.module",
    "pathlib": "pathlib",
}


def _fail(why: str):
    raise OnnxImportError(f"generated code refused before running it: {why}")


@functools.lru_cache(maxsize=None)
def _module_member_ok(module: str, attr: str) -> bool:
    import importlib

    obj = getattr(importlib.import_module(module), attr, None)
    return obj is not None and (inspect.isfunction(obj) or inspect.isclass(obj)
                                or inspect.isbuiltin(obj))


def _check_module_level(tree: ast.Module, class_name: str) -> set[str]:
    """The module's statements; returns the names they bind."""
    bound: set[str] = set()
    body = list(tree.body)
    if not body or not (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
        _fail("no module docstring first")
    for stmt in body[1:]:
        if isinstance(stmt, ast.ImportFrom):
            allowed = IMPORTS.get(stmt.module or "")
            for a in stmt.names:
                if allowed is None or a.name not in allowed:
                    _fail(f"import of {stmt.module}.{a.name}")
                bound.add(a.asname or a.name)
        elif isinstance(stmt, ast.Import):
            if [a.name for a in stmt.names] != ["pathlib"] or stmt.names[0].asname:
                _fail("an import other than pathlib")
            bound.add("pathlib")
        elif isinstance(stmt, ast.Assign):
            if [ast.dump(t) for t in stmt.targets] != [ast.dump(ast.Name("RECORD", ast.Store()))]:
                _fail("a module-level assignment other than RECORD")
            bound.add("RECORD")
        elif isinstance(stmt, ast.ClassDef):
            bases = [ast.dump(b) for b in stmt.bases]
            if stmt.name != class_name or bases != [ast.dump(ast.Name("Module", ast.Load()))]:
                _fail(f"class {stmt.name!r}")
            if stmt.decorator_list or stmt.keywords:
                _fail("a decorated class")
            _check_class_body(stmt)
            bound.add(stmt.name)
        else:
            _fail(f"a module-level {type(stmt).__name__}")
    return bound


def _check_class_body(cls: ast.ClassDef) -> None:
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            continue
        if isinstance(stmt, ast.FunctionDef) and stmt.name in ("init", "from_file", "forward"):
            for d in stmt.decorator_list:
                if ast.dump(d) != ast.dump(ast.Name("classmethod", ast.Load())):
                    _fail(f"decorator on {stmt.name}")
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        _fail(f"a class-level {type(stmt).__name__}")


def verify_source(source: str, class_name: str) -> None:
    """Raise `OnnxImportError` unless `source` has the generator's shape (see module doc)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        _fail(f"it does not parse: {type(err).__name__}: {err}")
    known = _check_module_level(tree, class_name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            known.add(node.id)
        elif isinstance(node, ast.arg):
            known.add(node.arg)
    known |= SAFE_BUILTINS
    for node in ast.walk(tree):
        if isinstance(node, DENIED_NODES):
            _fail(f"a {type(node).__name__} at line {getattr(node, 'lineno', '?')}")
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in tree.body:
            _fail(f"an import at line {node.lineno}")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
            _fail(f"unknown name {node.id!r} at line {node.lineno}")
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_") or node.attr in DENIED_ATTRS:
                _fail(f"attribute {node.attr!r} at line {node.lineno}")
            base = node.value
            if isinstance(base, ast.Name) and base.id in MODULE_OBJECTS:
                if not _module_member_ok(MODULE_OBJECTS[base.id], node.attr):
                    _fail(f"{base.id}.{node.attr} at line {node.lineno}")
