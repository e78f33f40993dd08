"""Printing of `Tensor`: Burn's Display (`print(t)`, `f"{t:.4}"`) and a one-line repr."""

from __future__ import annotations

import numpy as np

from ._dtype import DType


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
        # Rust spells booleans `true`/`false` and quotes strings with `"` in Burn's Display.
        # `precision` is Burn's `{:.N}`: every float printed with exactly N decimals.
        data = np.array2string(
            self.to_data().array,
            separator=", ",
            threshold=1000,
            edgeitems=3,
            precision=4 if precision is None else precision,
            floatmode="maxprec" if precision is None else "fixed",
            formatter={"bool": lambda b: "true" if b else "false"},
        )
        dt = self.dtype
        short = {"float": "f", "int": "i", "uint": "u"}
        name = (
            "bool"
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
