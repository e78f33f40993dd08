"""From a loaded object to named tensors: top-level key, flattening, key remapping, indices.

The result of every step is a flat mapping `key -> Source(tensor, original key, stored dtype)`,
the tensors of a PyTorch state dict under the names the module will look for.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from burn_tensor import TensorData

from ._errors import RecordImportError
from ._load_args import LoadArgs, compile_remap


@dataclass(frozen=True)
class Source:
    """One tensor of the file: its data, its key in the file, and the dtype the file stored."""

    data: TensorData
    original: str
    stored_dtype: str


def select(obj: Any, key: str | None, name: str) -> Any:
    """`obj[key]` for `with_top_level_key`, with an error listing the keys that do exist."""
    if key is None:
        return obj
    if not isinstance(obj, dict):
        raise RecordImportError(
            f"{name}: top-level key {key!r} asked, but the file holds a "
            f"{type(obj).__name__}, not a dict"
        )
    if key not in obj:
        keys = ", ".join(repr(k) for k in list(obj)[:20])
        raise RecordImportError(f"{name}: no top-level key {key!r}; the file has {keys}")
    return obj[key]


def flatten_tensors(obj: Any, name: str, prefix: str = "") -> dict[str, TensorData]:
    """Every tensor of a nested dict/list tree by dotted path; other values are skipped.

    Example:
        >>> t = TensorData([1.0])
        >>> list(flatten_tensors({"fc": {"weight": t, "n": 3}, "layers": [t]}, "f"))
        ['fc.weight', 'layers.0']
    """
    out: dict[str, TensorData] = {}

    def walk(x: Any, path: str) -> None:
        if isinstance(x, TensorData):
            out[path or "<root>"] = x
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(x, list | tuple):
            for i, v in enumerate(x):
                walk(v, f"{path}.{i}" if path else str(i))

    walk(obj, prefix)
    return out


def remap(
    tensors: Mapping[str, TensorData], dtypes: Mapping[str, str], args: LoadArgs, name: str
) -> dict[str, Source]:
    """Apply the remap rules, then renumber non-contiguous indices; refuse name collisions.

    Example:
        >>> t = TensorData([1.0])
        >>> args = LoadArgs("m.pt").with_key_remap(r"^model\\.", "")
        >>> list(remap({"model.seq.0.w": t, "model.seq.2.w": t}, {}, args, "m.pt"))
        ['seq.0.w', 'seq.1.w']
    """
    rules = [compile_remap(p, r) for p, r in args.key_remap]
    renamed: dict[str, Source] = {}
    for key, data in tensors.items():
        new = key
        for rule in rules:
            new = rule(new)
        if new in renamed:
            raise RecordImportError(
                f"{name}: keys {renamed[new].original!r} and {key!r} are both remapped to {new!r}"
            )
        renamed[new] = Source(data, key, dtypes.get(key, data.dtype.value))
    if args.contiguous_indices:
        renamed = dict(zip(contiguous(list(renamed)), renamed.values()))
    return renamed


def contiguous(keys: list[str]) -> list[str]:
    """Renumber numeric key parts per parent so they run 0, 1, 2, ... in their original order.

    Example:
        >>> contiguous(["a.0.w", "a.0.b", "a.2.w", "a.5.w", "b.w"])
        ['a.0.w', 'a.0.b', 'a.1.w', 'a.2.w', 'b.w']
    """
    parts = [k.split(".") for k in keys]
    depth = max((len(p) for p in parts), default=0)
    for d in range(depth):
        groups: dict[tuple[str, ...], set[int]] = {}
        for p in parts:
            if len(p) > d + 1 and p[d].isdigit():  # an index with something below it
                groups.setdefault(tuple(p[:d]), set()).add(int(p[d]))
        mapping = {
            parent: {old: str(new) for new, old in enumerate(sorted(found))}
            for parent, found in groups.items()
            if sorted(found) != list(range(len(found)))
        }
        for p in parts:
            table = mapping.get(tuple(p[:d]))
            if table is not None and len(p) > d + 1 and p[d].isdigit():
                p[d] = table[int(p[d])]
    return [".".join(p) for p in parts]


def debug_print(sources: Mapping[str, Source], file: TextIO | None = None) -> None:
    """Burn's `with_debug_print` output: original key, remapped key, shape and dtype of each."""
    out = file or sys.stdout
    print("Debug information of keys and tensor shapes:", file=out)
    for key, src in sources.items():
        print(f"Original Key: {src.original}", file=out)
        print(f"Remapped Key: {key}", file=out)
        print(f"Shape: {list(src.data.shape)}", file=out)
        stored = "" if src.stored_dtype == src.data.dtype.value else f" (stored {src.stored_dtype})"
        print(f"Dtype: {src.data.dtype.name}{stored}", file=out)


def nest(flat: Mapping[str, Any], name: str) -> dict[str, Any]:
    """`{"a.b.c": x}` -> `{"a": {"b": {"c": x}}}`; a key that is also a prefix is refused.

    Example:
        >>> nest({"fc.weight": 1, "fc.bias": 2, "head.0.w": 3}, "f")
        {'fc': {'weight': 1, 'bias': 2}, 'head': {'0': {'w': 3}}}
    """
    root: dict[str, Any] = {}
    for key, value in flat.items():
        node = root
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise RecordImportError(f"{name}: {key!r} lies below the tensor {part!r}")
        if leaf in node:
            raise RecordImportError(f"{name}: {key!r} is both a tensor and a prefix of others")
        node[leaf] = value
    return root
