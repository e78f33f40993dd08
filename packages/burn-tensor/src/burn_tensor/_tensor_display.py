"""Printing of `Tensor`: Burn's Display (`print(t)`, `f"{t:.4}"`) and a one-line repr."""

from __future__ import annotations

import dataclasses

from ._dtype import DType
from ._print import format_array, print_options


class DisplayMixin:
    __slots__ = ()

    # -- printing --------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return (
            f"Tensor(shape={list(self._p.shape)}, kind={self._o.kind.value}, "
            f"dtype={self.dtype.value}, device={self._d!r})"
        )

    def __str__(self) -> str:
        return self._display()

    def _display(self, precision: int | None = None) -> str:
        # Burn's Display: elements as Rust's `{:?}` (`3.0`, `true`), rows on their own lines,
        # summarised past `PrintOptions.threshold`; `precision` is Burn's `{:.N}` (N decimals).
        options = print_options()
        if precision is not None:
            options = dataclasses.replace(options, precision=precision)
        data = format_array(self.to_data().array, options)
        dt = self.dtype
        short = {"float": "f", "int": "i", "uint": "u"}
        name = (
            dt.value
            if getattr(dt, "is_quantized", False)
            else "bool"
            if dt is DType.BOOL
            else next(
                short[p] + dt.value[len(p) :]
                for p in ("float", "uint", "int")
                if dt.value.startswith(p)
            )
        )
        return (
            "Tensor {\n"
            f"  data:\n{data},\n"
            f"  shape:  {list(self._p.shape)},\n"
            f"  device:  {self._d!r},\n"
            f'  backend:  "{self._d.backend.name}",\n'
            f'  kind:  "{self._o.kind.value}",\n'
            f'  dtype:  "{name}",\n'
            "}"
        )

    def __format__(self, spec: str) -> str:
        # A one-element tensor formats as its scalar (`f"{loss:.4f}"`); any other tensor takes
        # Burn's `println!("{:.2}", tensor)`: the Display with that many decimals.
        if spec and self.numel() != 1 and spec[0] == "." and spec[1:].isdigit():
            return self._display(int(spec[1:]))
        return str(self) if not spec else format(self.into_scalar(), spec)
