"""Plain functions over the readers: whole `.pt` objects, configs, safetensors dicts."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from burn_tensor import TensorData

from ._keys import select
from ._pt_reader import read_pt
from ._safetensors_io import read_safetensors, write_safetensors


def load_pytorch(path: str | os.PathLike, top_level_key: str | None = None) -> Any:
    """Everything `torch.save` stored in a `.pt` file, read without torch or code execution.

    Tensors come back as `TensorData` in their stored dtype (bf16 widened to f32 exactly,
    unsigned 16/32/64-bit ints as int64); dicts (OrderedDicts too), lists, tuples, numbers,
    strings and None as themselves.

    Args:
        path: the `.pt` / `.pth` file (zip or legacy format).
        top_level_key: return only `obj[top_level_key]`.

    Example:
        >>> import pathlib
        >>> fixtures = pathlib.Path(__file__).parents[2] / "tests/fixtures/pt"
        >>> sd = load_pytorch(fixtures / "linear.pt")
        >>> list(sd), sd["fc.weight"].shape
        (['fc.weight', 'fc.bias'], Shape([2, 3]))
    """
    obj, _ = read_pt(path)
    return select(obj, top_level_key, Path(path).name)


def config_from_file(path: str | os.PathLike, top_level_key: str | None = None) -> Any:
    """The plain values saved beside the weights (Burn's `config_from_file`), e.g. a dict of
    hyper-parameters stored under `"config"`; build your `@config` class from it.

    Example:
        >>> import pathlib
        >>> fixtures = pathlib.Path(__file__).parents[2] / "tests/fixtures/pt"
        >>> config_from_file(fixtures / "checkpoint.pt", "config")["d_hidden"]
        8
    """
    return load_pytorch(path, top_level_key)


def load_safetensors(path: str | os.PathLike) -> dict[str, TensorData]:
    """Every tensor of a safetensors file by name, stored dtypes kept (bf16 widened to f32).

    Example:
        >>> import tempfile
        >>> p = save_safetensors({"a": np.arange(3, dtype=np.int64)}, tempfile.mkdtemp() + "/x")
        >>> load_safetensors(p)["a"].tolist()
        [0, 1, 2]
    """
    return read_safetensors(path)[0]


def safetensors_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The `__metadata__` strings of a safetensors file (e.g. `{"format": "pt"}`)."""
    return read_safetensors(path)[1]


def save_safetensors(
    tensors: Mapping[str, TensorData | np.ndarray],
    path: str | os.PathLike,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write named tensors (Burn dtypes) as a safetensors file, atomically; returns the path."""
    return write_safetensors(tensors, path, metadata)
