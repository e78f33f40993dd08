"""Burn's Display of tensor data: `PrintOptions`, `set_print_options` and the element format.

Burn prints every element with Rust's `{:?}` (Debug): floats as the shortest decimal that reads back
to the same value in their own precision, always with a fractional part (`3.0`, `0.1`, never `3.`),
switching to exponent form below 1e-4 and from 1e16 (`1e-5`, `1.5e16`); `NaN`, `inf`, `-inf`;
booleans `true`/`false`. With a precision (`PrintOptions.precision` or `format(t, ".2")`) floats
take Rust's `{:.N}`: exactly N decimals, never an exponent. Rows are joined by `,` and a newline
indented by depth (no padding, no line wrapping, unlike numpy). A tensor of more than `threshold`
elements is summarised: every dim longer than `2 * edge_items` shows its first and last
`edge_items` entries around `...`.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np


@dataclasses.dataclass(frozen=True)
class PrintOptions:
    """How `print(tensor)` shows the data (Burn's `PrintOptions`).

    Args:
        threshold: tensors with more elements than this are summarised.
        edge_items: entries kept at each end of a summarised dim.
        precision: decimals for floats; None prints the shortest exact form (Burn's default).

    Example:
        >>> PrintOptions()
        PrintOptions(threshold=1000, edge_items=3, precision=None)
    """

    threshold: int = 1000
    edge_items: int = 3
    precision: int | None = None


_lock = threading.Lock()
_options = PrintOptions()


def set_print_options(options: PrintOptions) -> None:
    """Set the options every later `print(tensor)` uses (Burn's `set_print_options`).

    Example:
        >>> set_print_options(PrintOptions(precision=2))
        >>> set_print_options(PrintOptions())  # back to Burn's defaults
    """
    global _options
    if not isinstance(options, PrintOptions):
        raise TypeError(f"set_print_options: expected PrintOptions, got {type(options).__name__}")
    with _lock:
        _options = options


def print_options() -> PrintOptions:
    """The options in force."""
    return _options


def format_element(value: np.generic, precision: int | None = None) -> str:
    """One element as Burn prints it (Rust's `{:?}`, or `{:.N}` for floats with a precision).

    Example:
        >>> format_element(np.float32(3.0)), format_element(np.float32(1e-5))
        ('3.0', '1e-5')
    """
    if isinstance(value, np.bool_ | bool):
        return "true" if value else "false"
    if isinstance(value, np.integer | int):
        return str(int(value))
    if value.dtype == np.float16:
        value = np.float32(value)  # `half`'s Debug and Display print the f32 conversion
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    if precision is not None:
        return f"{float(value):.{precision}f}"
    magnitude = abs(value)
    # The thresholds are compared in the element's own precision, as Rust's Debug does.
    if (magnitude != 0 and magnitude < value.dtype.type(1e-4)) or magnitude >= value.dtype.type(
        1e16
    ):
        text = np.format_float_scientific(value, unique=True, trim="-", exp_digits=1)
        return text.replace("e+", "e")
    return np.format_float_positional(value, unique=True, trim="0")


def format_array(array: np.ndarray, options: PrintOptions | None = None) -> str:
    """The data block of Burn's tensor Display: nested brackets, rows on their own lines.

    Example:
        >>> print(format_array(np.array([[3.0, 4.0], [5.0, 6.0]], np.float32)))
        [[3.0, 4.0],
         [5.0, 6.0]]
    """
    options = options or _options
    if array.ndim == 0:
        return format_element(array[()], options.precision)
    summarise = array.size > options.threshold
    out: list[str] = []
    _format_dim(array, 0, summarise, options, out)
    return "".join(out)


def _edge_ranges(n: int, summarise: bool, edge: int) -> list[range | None]:
    if summarise and n > 2 * edge:
        return [range(edge), None, range(n - edge, n)]
    return [range(n)]


def _format_dim(
    array: np.ndarray, depth: int, summarise: bool, options: PrintOptions, out: list[str]
) -> None:
    out.append("[")
    parts = _edge_ranges(array.shape[0], summarise, options.edge_items)
    if array.ndim == 1:
        items = []
        for part in parts:
            items.extend(
                ["..."]
                if part is None
                else [format_element(array[i], options.precision) for i in part]
            )
        out.append(", ".join(items))
    else:
        indent = "\n" + " " * (depth + 1)
        previous = None
        for part in parts:
            for i in [None] if part is None else part:
                if previous is not None:
                    # Burn puts no comma after the `...` line, only after rows.
                    out.append(indent if previous == "..." else "," + indent)
                if i is None:
                    out.append("...")
                    previous = "..."
                else:
                    _format_dim(array[i], depth + 1, summarise, options, out)
                    previous = "row"
    out.append("]")
