"""How text from an ONNX model may appear in generated source: the naming rules.

Nothing a model says is pasted into code. Value names become Python identifiers only through
`identifier` (NFKC-normalized, accents dropped, everything but `[A-Za-z0-9_]` replaced, never a
keyword, builtin or one of the generated module's own names); the uniqueness of the result is
kept by `Gen.fresh`. Comments and the module docstring carry only `safe_text` (the characters
`[A-Za-z0-9_.:/+-]`, truncated), so no quote, backslash or line break from a model reaches the
source. Class names chosen by the user and output module names are checked here too.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import re
import sys
import unicodedata

MAX_IDENTIFIER = 48  # longer model names are truncated (uniqueness is restored by a suffix)
MAX_TEXT = 48  # characters of model text kept in one comment field

# Names the generated module binds at module level (imports, RECORD, the record and precision
# classes) or uses inside its methods; a model value with one of these names would shadow them.
MODULE_NAMES = frozenset(
    {
        "annotations", "pathlib", "RECORD", "ops", "np", "F", "Tensor", "DType", "activation",
        "default_device", "Module", "Param", "BatchNorm", "BatchNormConfig", "Conv1d",
        "Conv1dConfig", "Conv2d", "Conv2dConfig", "ConvTranspose2d", "ConvTranspose2dConfig",
        "Embedding", "EmbeddingConfig", "GroupNorm", "GroupNormConfig", "LayerNorm",
        "LayerNormConfig", "Linear", "LinearConfig", "PaddingConfig1d", "BiLstm", "BiLstmConfig",
        "Gru", "GruConfig", "Lstm", "LstmConfig", "MhaInput", "MultiHeadAttention",
        "MultiHeadAttentionConfig",
        "PaddingConfig2d", "NamedMpkFileRecorder", "NamedMpkGzFileRecorder", "BinFileRecorder",
        "PrettyJsonFileRecorder", "JsonGzFileRecorder", "FullPrecisionSettings",
        "HalfPrecisionSettings", "DoublePrecisionSettings", "Model",
        # method-level names and spellings of non-finite floats
        "self", "cls", "device", "path", "recorder", "nan", "inf",
    }
)  # fmt: skip
RESERVED = (
    MODULE_NAMES
    | frozenset(keyword.kwlist)
    | frozenset(keyword.softkwlist)
    | frozenset(dir(builtins))
)
# The generated module's own imports: an output module of that name would shadow them.
OWN_IMPORTS = frozenset({"burn", "burn_tensor", "burn_nn", "burn_record", "burn_import", "numpy"})


def _ascii_word(text: str) -> str:
    """`text` NFKC-normalized (Python's view of identifiers), accents dropped, and every run of
    characters outside `[A-Za-z0-9_]` replaced by one `_`."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(
        c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn"
    )
    return re.sub(r"[^0-9A-Za-z_]+", "_", text)


def identifier(text: str, reserved: frozenset[str] | set[str] = RESERVED) -> str:
    """A plain ASCII Python identifier derived from `text`; not unique (see `Gen.fresh`).

    Example:
        >>> identifier("conv1/Relu:0"), identifier("ｘ"), identifier("a²"), identifier("ops")
        ('conv1_Relu_0', 'x', 'a2', 'ops_')
        >>> identifier("class"), identifier("3d"), identifier("__import__"), identifier("\\n")
        ('class_', 'v_3d', 'import_', 'v')
    """
    name = _ascii_word(text).strip("_")[:MAX_IDENTIFIER].rstrip("_") or "v"
    if name[0].isdigit():
        name = "v_" + name
    if name in reserved:
        name += "_"
    return name


def safe_text(text: str, limit: int = MAX_TEXT) -> str:
    """Model text for a comment or docstring: only `[A-Za-z0-9_.:/+-]`, at most `limit` chars.

    Example:
        >>> safe_text("x'''\\nimport os"), safe_text("C:\\\\Users\\\\me")
        ('x____import_os', 'C:_Users_me')
    """
    text = re.sub(r"[^0-9A-Za-z_.:/+-]", "_", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def label(text: str, limit: int = MAX_TEXT) -> str:
    """`safe_text` in single quotes: how comments name a node (`# Conv 'conv1': ...`)."""
    return f"'{safe_text(text, limit)}'"


def check_class_name(name) -> str:
    """The user's class name for the generated Module, or ValueError: it must be a plain ASCII
    identifier that is no keyword (soft ones included), builtin or name of the module itself."""
    if not isinstance(name, str) or not name.isascii() or not name.isidentifier():
        raise ValueError(f"class_name: {name!r} is not a plain ASCII Python identifier")
    if name in RESERVED - {"Model"} or name.startswith("__"):
        raise ValueError(
            f"class_name: {name!r} is a keyword, builtin or name the generated module uses"
        )
    return name


@functools.lru_cache(maxsize=1)
def _importable() -> frozenset[str]:
    """Top-level module names that an output module must not shadow: the standard library,
    every installed distribution's, and the project's own (`burn*`)."""
    from importlib.metadata import packages_distributions

    return (
        frozenset(sys.stdlib_module_names)
        | frozenset(sys.builtin_module_names)
        | frozenset(packages_distributions())
        | OWN_IMPORTS
    )


def module_stem(stem: str) -> str:
    """The output module name for an input file stem: lower-case ASCII identifier; a name that
    would shadow an importable module, a keyword or builtin gets the suffix `_model`.

    Example:
        >>> module_stem("ResNet-50"), module_stem("numpy"), module_stem("3d"), module_stem("class")
        ('resnet_50', 'numpy_model', 'm_3d', 'class_model')
    """
    name = _ascii_word(stem).lower().strip("_")[:MAX_IDENTIFIER] or "model"
    if name[0].isdigit():
        name = "m_" + name
    if name in RESERVED or name in _importable() or name.startswith("burn"):
        name += "_model"
    return name
