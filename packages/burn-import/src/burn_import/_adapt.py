"""Building the record a module's `load_record` accepts, adapting PyTorch's names and layouts.

Burn chooses an adapter by the type of the module being filled (its `PyTorchAdapter` matches the
struct name); here the target module is given, so each parameter's owner is known exactly:

- `Linear` (Burn's default `Row` layout): torch's weight `[d_output, d_input]` is transposed to
  `[d_input, d_output]`; a `Col`-layout Linear already has torch's layout and is not transposed.
- `BatchNorm`, `LayerNorm`, `GroupNorm`, `InstanceNorm`, `RmsNorm`: `weight`/`bias` become
  `gamma`/`beta`; `running_mean`/`running_var` keep their names (torch's `num_batches_tracked`
  has no counterpart and is left unused).
- `Lstm` (and `BiLstm`'s two directions): torch packs the gates `(input, forget, cell, output)`
  along dim 0 of `weight_ih_l0` `[4 * d_hidden, d_input]`, `weight_hh_l0` and the biases
  (`*_l0_reverse` for the reverse direction); they are split into the per-gate Linear layers.
- Everything else (Conv, ConvTranspose, Embedding, PRelu, ...) is taken as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from burn_nn import (
    BatchNorm,
    BiLstm,
    GroupNorm,
    InstanceNorm,
    LayerNorm,
    Linear,
    LinearLayout,
    Lstm,
    Module,
    RmsNorm,
)
from burn_record import ParamRecord, PrecisionSettings, RecordPrecisionError, convert_precision
from burn_tensor import TensorData

from ._errors import RecordImportError, TensorMismatchError
from ._keys import Source

NORMS = (BatchNorm, LayerNorm, GroupNorm, InstanceNorm, RmsNorm)
NORM_NAMES = {"gamma": "weight", "beta": "bias"}
# torch's gate order inside the packed LSTM tensors, and Burn's field for each.
LSTM_GATES = ("input_gate", "forget_gate", "cell_gate", "output_gate")
LSTM_PARTS = {
    "weight_ih": "input_transform.weight",
    "weight_hh": "hidden_transform.weight",
    "bias_ih": "input_transform.bias",
    "bias_hh": "hidden_transform.bias",
}


@dataclass
class LoadReport:
    """What a load did: each loaded parameter's source, the missing ones, the unused tensors.

    Attributes:
        loaded: Burn path -> key in the file (after `[a:b]`: the rows taken from a packed tensor).
        adapted: Burn path -> what was done to it (`"transposed"`, `"renamed from weight"`, ...).
        missing: Burn paths the file has no tensor for (kept from the module when allowed).
        unused: keys of the file no parameter took (ignored unless `with_error_on_unused`).
    """

    loaded: dict[str, str] = field(default_factory=dict)
    adapted: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)


def convert(data: TensorData, settings: PrecisionSettings, key: str) -> TensorData:
    """Cast to the precision settings' float / int type (bool kept); ints must fit.

    burn_record's own conversion (the one its recorders apply when saving), with the error in
    this package's family."""
    try:
        return convert_precision(data, settings, key)
    except RecordPrecisionError as exc:
        raise RecordImportError(str(exc)) from exc


def _navigate(root: Any, parts: list[str]) -> Any:
    node = root
    for part in parts:
        node = (
            node[int(part)]
            if isinstance(node, list | tuple)
            else (node[part] if isinstance(node, dict) else getattr(node, part))
        )
    return node


def unpack_lstms(model: Module, sources: dict[str, Source]) -> None:
    """Replace torch's packed LSTM tensors by per-gate keys (torch layout), in place."""
    prefixes = {}
    for path, _ in model.named_parameters():
        parts = path.split(".")
        for i in range(len(parts)):
            node = _navigate(model, parts[:i])
            if isinstance(node, Lstm):
                prefixes[".".join(parts[:i])] = parts[:i]
                break
    for prefix, parts in prefixes.items():
        parent = _navigate(model, parts[:-1]) if parts else None
        if isinstance(parent, BiLstm):
            src = ".".join(parts[:-1])
            suffix = "_l0" if parts[-1] == "forward_lstm" else "_l0_reverse"
        else:
            src, suffix = prefix, "_l0"
        for torch_name, burn_part in LSTM_PARTS.items():
            key = f"{src}.{torch_name}{suffix}" if src else f"{torch_name}{suffix}"
            source = sources.get(key)
            if source is None:
                continue
            arr = source.data.array
            if arr.ndim < 1 or arr.shape[0] % 4:
                problem = (
                    f"{prefix} (from {source.original}): packed LSTM tensor of shape "
                    f"{list(arr.shape)} does not split into 4 gates"
                )
                raise TensorMismatchError([problem])
            del sources[key]
            rows = arr.shape[0] // 4
            for g, gate in enumerate(LSTM_GATES):
                name = f"{prefix}.{gate}.{burn_part}" if prefix else f"{gate}.{burn_part}"
                sources[name] = Source(
                    TensorData(arr[g * rows : (g + 1) * rows].copy()),
                    f"{source.original}[{g * rows}:{(g + 1) * rows}]",
                    source.stored_dtype,
                )


def build_record(
    model: Module,
    sources: dict[str, Source],
    settings: PrecisionSettings,
    pytorch: bool,
    allow_missing: bool,
    error_on_unused: bool,
    ids: dict[str, str] | None = None,
) -> tuple[dict, LoadReport]:
    """The module's record (`model.into_record()` structure) filled from `sources`.

    Parameter ids are the module's, or those of `ids` (original key -> id) for files that carry
    them (burn-py's safetensors).

    Raises:
        TensorMismatchError: naming every missing (unless allowed), mis-shaped or wrong-kind
            parameter, and every unused tensor when `error_on_unused`.
    """
    sources = dict(sources)
    if pytorch:
        unpack_lstms(model, sources)
    report = LoadReport()
    problems: list[str] = []
    loaded: dict[str, ParamRecord] = {}
    ids = ids or {}
    for path, param in model.named_parameters():
        parts = path.split(".")
        owner, name = _navigate(model, parts[:-1]), parts[-1]
        prefix = ".".join(parts[:-1])
        names = [name]
        if pytorch and isinstance(owner, NORMS) and name in NORM_NAMES:
            names.insert(0, NORM_NAMES[name])
        keys = [f"{prefix}.{n}" if prefix else n for n in names]
        key = next((k for k in keys if k in sources), None)
        if key is None:
            report.missing.append(path)
            if not allow_missing:
                problems.append(f"{path}: missing (looked for {' or '.join(keys)})")
            continue
        src = sources.pop(key)
        data = src.data
        how = [] if key.endswith("." + name) or key == name else [f"renamed from {names[0]}"]
        linear = isinstance(owner, Linear) and owner.layout is LinearLayout.Row
        if pytorch and linear and name == "weight":
            if data.array.ndim != 2:
                problems.append(
                    f"{path} (from {src.original}): a Linear weight must be 2-D, "
                    f"the file has shape {list(data.shape)}"
                )
                continue
            data = TensorData(np.ascontiguousarray(data.array.T))
            how.append("transposed")
        value = param.val()
        expected, got = list(value.dims()), list(data.shape)
        if expected != got:
            note = " after transposing torch's [d_output, d_input]" if "transposed" in how else ""
            problems.append(
                f"{path} (from {src.original}): expected shape {expected}, got {got}{note}"
            )
            continue
        kind = value.dtype.kind
        if data.dtype.kind is not kind:
            problems.append(
                f"{path} (from {src.original}): the module holds {kind} "
                f"({value.dtype.value}), the file {data.dtype.value}"
            )
            continue
        data = convert(data, settings, f"{path} (from {src.original})")
        loaded[path] = ParamRecord(ids.get(src.original, str(param.id)), data)
        report.loaded[path] = src.original
        if how:
            report.adapted[path] = ", ".join(how)
    report.unused = sorted(s.original for s in sources.values())
    if error_on_unused and report.unused:
        problems.append("unused tensors in the file: " + ", ".join(report.unused))
    if problems:
        raise TensorMismatchError(problems)
    return _fill(model.into_record(), loaded, ""), report


def _fill(node: Any, loaded: dict[str, ParamRecord], path: str) -> Any:
    if isinstance(node, ParamRecord):
        return loaded.get(path, node)
    if isinstance(node, dict):
        return {k: _fill(v, loaded, f"{path}.{k}" if path else k) for k, v in node.items()}
    if isinstance(node, list | tuple):
        items = [_fill(v, loaded, f"{path}.{i}" if path else str(i)) for i, v in enumerate(node)]
        return items if isinstance(node, list) else tuple(items)
    return node
