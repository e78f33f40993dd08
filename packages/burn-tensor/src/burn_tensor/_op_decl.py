"""The op record: one `OpDecl` per op of the backend contract, kept in `DECLS`.

A record says everything the packages around the contract need to know about an op, so an op is
declared once (in `_op_decls.py`) and every table elsewhere is built from, or checked against, its
record:

- `name`, `kind` (the element kind of its first tensor operand: "float", "int" or "bool"), `view`
  (its name in that kind's view, which the Tensor layer calls: `float_exp` is `exp` on Float
  tensors; None for ops outside the views: module ops, `bitwise_*`) and `dtypes` (the dtype names
  its tensors of that kind may have);
- `sig`: its signature (arguments -> result, in `OP_CONVENTIONS`' terms);
- `shape`: its shape rule (`SAME`, `BROADCAST`, `KEEP_DIM`, `SCALAR`, `NONE`, or `CUSTOM`: the op
  computes it); `out_shape(shapes, args)` applies it;
- `default`: its default decomposition (a function written with other ops in the family mixins,
  bound when the contract is built), or None for a required op every backend implements;
- `autodiff`: how Autodiff runs it: `RULE` (recorded with a gradient rule of burn-autodiff's
  `RULES`), `PASS` (the inner op, nothing recorded), `DECOMPOSE` (the default runs on Autodiff, so
  its parts are differentiated) or `SPECIAL` (Autodiff's own method);
- `fusion`: how Fusion runs it: `ELEMENTWISE` (recorded on the lazy stream), `REDUCTION` (fused
  with the ops around it) or None (the inner backend's op, or the default run on Fusion);
- `expr`: its key in burn-gpu's expression table (`burn_gpu.OPS`), or None.

Example:
    >>> from burn_tensor.ops import DECLS
    >>> d = DECLS["float_add"]
    >>> d.kind, d.view, d.autodiff, d.fusion, d.expr
    ('float', 'add', 'rule', 'elementwise', 'float_add')
    >>> d.out_shape([(2, 1), (1, 3)])
    (2, 3)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ._dtype import FLOAT_DTYPES, INT_DTYPES

# shape rules
SAME, BROADCAST, KEEP_DIM, SCALAR, NONE, CUSTOM = (
    "same", "broadcast", "keep_dim", "scalar", "none", "custom"
)  # fmt: skip
SHAPES = (SAME, BROADCAST, KEEP_DIM, SCALAR, NONE, CUSTOM)
# autodiff classes
RULE, PASS, DECOMPOSE, SPECIAL = "rule", "pass", "default", "special"
AUTODIFF = (RULE, PASS, DECOMPOSE, SPECIAL)
# fusion classes
ELEMENTWISE, REDUCTION = "elementwise", "reduction"
FUSION = (ELEMENTWISE, REDUCTION, None)
#: in a declaration row: the op has a default decomposition (its signature is the default's)
DEFAULT = "<default>"
#: in a declaration row: the op has an expression in burn-gpu's table, under its own name
EXPR = True

_DTYPES = {
    "float": tuple(d.value for d in FLOAT_DTYPES),
    "int": tuple(d.value for d in INT_DTYPES),
    "bool": ("bool",),
}


class ContractError(ValueError):
    """The op declarations and a table built from them disagree (an op declared twice, a table
    entry for an undeclared op, a default for a required op, ...). The message names the op."""


class UnknownOpError(ContractError, KeyError):
    """A name that is not an op of the contract."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return self.args[0]


@dataclasses.dataclass(frozen=True)
class OpDecl:
    """The record of one op (see the module docstring for each field)."""

    name: str
    kind: str
    view: str | None
    dtypes: tuple[str, ...]
    sig: str
    shape: str
    autodiff: str
    fusion: str | None
    expr: str | None
    #: the default decomposition, bound by `bind_defaults`; `has_default` is what the row said
    default: Callable | None = None
    has_default: bool = False

    @property
    def required(self) -> bool:
        """Whether every backend must implement the op (it has no default decomposition)."""
        return not self.has_default

    def out_shape(self, shapes: Sequence[Sequence[int]], args: Sequence[Any] = ()) -> tuple | None:
        """The output shape for tensor operands of `shapes` (and the op's other arguments
        `args`, where the rule reads a dim), or None when the op computes it (`CUSTOM`/`NONE`)."""
        shapes = [tuple(s) for s in shapes]
        if self.shape == SAME and shapes:
            return shapes[0]
        if self.shape == BROADCAST and shapes:
            rank = max(len(s) for s in shapes)
            padded = [(1,) * (rank - len(s)) + s for s in shapes]
            return tuple(max(dims) if min(dims) != 0 else 0 for dims in zip(*padded))
        if self.shape == SCALAR:
            return (1,)
        if self.shape == KEEP_DIM and shapes and args:
            dim = int(args[0])
            return tuple(1 if i == dim else d for i, d in enumerate(shapes[0]))
        return None


#: name -> record of every op of the contract (filled by `_op_decls.py`)
DECLS: dict[str, OpDecl] = {}


def kind_of(name: str) -> str:
    """The kind of op `name`'s first tensor operand, read from its Burn name: `float_*`,
    `int_*`, `bool_*`; `bitwise_*` ops are int ops; module and activation ops are float ops."""
    for k in ("float", "int", "bool"):
        if name.startswith(k + "_"):
            return k
    return "int" if name.startswith("bitwise_") else "float"


def op(names: str, sig: str, shape: str, autodiff: str, fusion=None, expr: bool = False) -> None:
    """Declare the ops `names` (space-separated) with one set of fields (a declaration row)."""
    if shape not in SHAPES or autodiff not in AUTODIFF or fusion not in FUSION:
        raise ContractError(
            f"declaration of {names!r}: shape {shape!r} / autodiff {autodiff!r} / fusion "
            f"{fusion!r} is not one of {SHAPES} / {AUTODIFF} / {FUSION}"
        )
    for name in names.split():
        if name in DECLS:
            raise ContractError(f"op {name!r} is declared twice")
        kind = kind_of(name)
        view = name[len(kind) + 1 :] if name.startswith(kind + "_") else None
        DECLS[name] = OpDecl(
            name=name,
            kind=kind,
            view=view,
            dtypes=_DTYPES[kind],
            sig="" if sig == DEFAULT else sig,
            shape=shape,
            autodiff=autodiff,
            fusion=fusion,
            expr=name if expr else None,
            has_default=sig == DEFAULT,
        )


def decl(name: str) -> OpDecl:
    """The record of op `name`; `UnknownOpError` naming the closest ops when there is none."""
    d = DECLS.get(name)
    if d is None:
        import difflib

        near = difflib.get_close_matches(name, list(DECLS), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise UnknownOpError(f"{name!r} is not an op of the backend contract{hint}")
    return d


def bind_defaults(families: Sequence[type]) -> None:
    """Put each declared default decomposition (a method of a family mixin) into its record, and
    check the rows against the mixins: a row saying DEFAULT needs a method, a required row must
    have none, and every public method of a mixin is a declared op."""
    import inspect

    found: dict[str, Callable] = {}
    for fam in families:
        for name, fn in vars(fam).items():
            if name.startswith("_") or not callable(fn):
                continue
            if name not in DECLS:
                raise ContractError(
                    f"{fam.__name__}.{name} is a default decomposition of an undeclared op; "
                    "declare it in burn_tensor/_op_decls.py"
                )
            found[name] = fn
    for name, d in DECLS.items():
        fn = found.get(name)
        if d.has_default and fn is None:
            raise ContractError(f"op {name!r} is declared with a default but no family defines it")
        if not d.has_default and fn is not None:
            raise ContractError(
                f"op {name!r} is declared required but {fn.__qualname__} is a default for it"
            )
        if fn is not None:
            sig = str(inspect.signature(fn)).replace("(self, ", "(", 1).replace("(self)", "()")
            DECLS[name] = dataclasses.replace(d, default=fn, sig=d.sig or sig)
