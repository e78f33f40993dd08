"""Module <-> snapshots: `collect` (Burn's `ModuleSnapshot::collect`) and `apply` (its
`Applier`), with Burn's classification of every path into applied, skipped, missing, unused
and errors."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from burn_record import ParamRecord

from ._adapter import ModuleAdapter
from ._filter import PathFilter
from ._snapshot import TensorSnapshot, containers


@dataclass(frozen=True)
class ApplyError:
    """Why one tensor was not loaded: `kind` is "ShapeMismatch" or "LoadError"."""

    kind: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind} for '{self.path}': {self.message}"


@dataclass
class ApplyResult:
    """What `load_from`/`apply` did (Burn's `ApplyResult`), paths sorted as Burn sorts them.

    Attributes:
        applied: module paths loaded from the store.
        skipped: paths the filter left out (they keep their values).
        missing: `(path, container path)` of module tensors the store does not hold.
        unused: store tensors no module path asked for.
        errors: `ApplyError`s (e.g. a shape mismatch): those tensors keep their values.
        module: the module with the loaded tensors (burn-py modules are values: the one
            given to `load_from` is not changed).
    """

    applied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    errors: list[ApplyError] = field(default_factory=list)
    module: Any = None

    def is_success(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        lines = [
            f"applied {len(self.applied)}, skipped {len(self.skipped)}, missing "
            f"{len(self.missing)}, unused {len(self.unused)}, errors {len(self.errors)}"
        ]
        lines += [f"  missing: {p}" for p, _ in self.missing]
        lines += [f"  unused: {p}" for p in self.unused]
        lines += [f"  error: {e}" for e in self.errors]
        return "\n".join(lines)


def collect(
    module: Any, filter: PathFilter | None = None, adapter: ModuleAdapter | None = None
) -> list[TensorSnapshot]:
    """The module's tensors as snapshots, in field order, kept by `filter` (None: all), then
    rewritten by `adapter`."""
    out = []
    for path, param in module.named_parameters():
        stack = containers(module, path.split("."))
        if filter is not None and not filter.matches(path, ".".join(stack)):
            continue
        tensor = param.val()
        snapshot = TensorSnapshot(
            path, tuple(int(d) for d in tensor.shape), tensor.dtype,
            lambda t=tensor: t.to_data(), param.id.val, stack,
        )  # fmt: skip
        out.append(adapter.adapt(snapshot) if adapter is not None else snapshot)
    return out


def apply(
    module: Any,
    snapshots: Iterable[TensorSnapshot],
    filter: PathFilter | None = None,
    adapter: ModuleAdapter | None = None,
) -> ApplyResult:
    """Load `snapshots` into a copy of `module` by path; `result.module` is that copy.

    For each module tensor: its snapshot is found by path (or by the adapter's alternative
    name), adapted with the module's container types, skipped when `filter` leaves it out,
    refused when its shape differs (an error; the tensor keeps its value), else loaded,
    converted to the module tensor's dtype, keeping the module's parameter id.
    """
    by_path = {s.path: s for s in snapshots}
    result = ApplyResult()
    loaded: dict[str, Any] = {}
    visited: dict[str, str] = {}
    for path, param in module.named_parameters():
        stack = containers(module, path.split("."))
        container_path = ".".join(stack)
        visited[path] = container_path
        snapshot = by_path.get(path)
        *parents, name = path.split(".")
        if snapshot is None and adapter is not None:
            alt = adapter.get_alternative_param_name(name, stack[-1])
            if alt is not None:
                snapshot = by_path.get(".".join([*parents, alt]))
        if snapshot is None:
            continue
        if adapter is not None:
            snapshot = adapter.adapt(
                TensorSnapshot(path, snapshot.shape, snapshot.dtype, snapshot.load,
                               snapshot.param_id, stack)  # fmt: skip
            )
        if filter is not None and not filter.matches(path, container_path):
            result.skipped.append(path)
            continue
        try:
            data = snapshot.to_data()
        except Exception as err:  # noqa: BLE001 - a damaged entry is reported, not raised
            result.errors.append(ApplyError("LoadError", path, f"{type(err).__name__}: {err}"))
            continue
        expected = [int(d) for d in param.val().shape]
        if list(data.shape) != expected:
            result.errors.append(
                ApplyError("ShapeMismatch", path, f"expected {expected}, found {list(data.shape)}")
            )
            continue
        loaded[path] = data
        result.applied.append(path)
    done = set(result.applied) | set(result.skipped) | {e.path for e in result.errors}
    result.missing = sorted((p, c) for p, c in visited.items() if p not in done)
    result.unused = sorted(p for p in by_path if p not in visited and p not in result.skipped)
    result.skipped.sort()
    result.module = _load(module, loaded) if loaded else module
    return result


def _load(module: Any, loaded: Mapping[str, Any]) -> Any:
    """`module.load_record` of its own record with the loaded tensors put in (same ids;
    load_record converts them to the module's dtypes and devices)."""

    def substitute(node: Any, path: list[str]) -> Any:
        if isinstance(node, ParamRecord):
            key = ".".join(path)
            return ParamRecord(node.id, loaded[key]) if key in loaded else node
        if isinstance(node, Mapping):
            return type(node)({k: substitute(v, [*path, str(k)]) for k, v in node.items()})
        if isinstance(node, (list, tuple)):
            return type(node)(substitute(v, [*path, str(i)]) for i, v in enumerate(node))
        return node

    return module.load_record(substitute(module.into_record(), []))
