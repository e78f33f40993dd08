"""A pickle reader that cannot run code: an allowlist of globals, each mapped to our own function.

Unpickling executes whatever callables the pickle names (`GLOBAL`/`STACK_GLOBAL`/`INST` fetch them,
`REDUCE`/`OBJ`/`NEWOBJ`/`BUILD` call them). Here every name goes through `find_class`, which
returns only the stand-ins of `ALLOWED` (rebuild functions that record arguments, a dict type,
markers) and refuses anything else with `UnsafePickleError` naming the global; no module is ever
imported. Before that, `prescan` walks the opcodes without executing any, so a pickle naming a
refused global anywhere is rejected before even its first object is built. Persistent ids (how
`.pt` files point at storages) are validated by `persistent_load`. No `torch` is needed.
"""

from __future__ import annotations

import copyreg
import io
import pickle
import pickletools
from collections.abc import Callable
from typing import Any

from . import _pt_refs as refs
from ._dtypes import RAW, STORAGE_DTYPE, UNSUPPORTED
from ._errors import RecordImportError, UnsafePickleError
from ._limits import Budget
from ._pickle_cost import FIXED_COST, memo_cost, opcode_cost


class OrderedState(dict):
    """`collections.OrderedDict` stand-in; torch's `_metadata` attribute (set by BUILD) is kept
    aside, never as an attribute."""

    def __setstate__(self, state: Any) -> None:
        self.state = state  # BUILD on a dict subclass: only this method can run


def _torch_size(*args: Any) -> tuple:
    if len(args) > 1 or (args and not isinstance(args[0], tuple | list)):
        raise RecordImportError("torch.Size: malformed arguments")
    return tuple(args[0]) if args else ()


def _torch_device(*args: Any) -> str:
    if not args or not all(isinstance(a, str | int) for a in args):
        raise RecordImportError("torch.device: malformed arguments")
    return ":".join(str(a) for a in args)


def _codecs_encode(text: Any, encoding: Any = "utf-8") -> bytes:
    # Protocol-2 pickles (torch's default) store `bytes` as `_codecs.encode(str, "latin1")`.
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise RecordImportError("_codecs.encode is only allowed as encode(str, 'latin1')")
    return text.encode("latin1")


def _container(kind: type) -> Callable[..., Any]:
    def build(items: Any = ()) -> Any:
        if not isinstance(items, list | tuple):
            raise RecordImportError(
                f"{kind.__name__}(): expected a list, got {type(items).__name__}"
            )
        return kind(items)

    return build


def _allowed() -> dict[tuple[str, str], Any]:
    table: dict[tuple[str, str], Any] = {
        ("torch._utils", "_rebuild_tensor"): refs.rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): refs.rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v3"): refs.rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): refs.rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): refs.rebuild_parameter,
        ("torch._tensor", "_rebuild_from_type_v2"): refs.rebuild_from_type_v2,
        ("torch", "Tensor"): refs.Marker("type", "Tensor"),
        ("torch.nn.parameter", "Parameter"): refs.Marker("type", "Parameter"),
        ("torch", "Size"): _torch_size,
        ("torch", "device"): _torch_device,
        ("collections", "OrderedDict"): OrderedState,
        ("_codecs", "encode"): _codecs_encode,
    }
    for module in ("builtins", "__builtin__"):  # protocol < 3 pickles name Python 2's module
        table[(module, "set")] = _container(set)
        table[(module, "frozenset")] = _container(frozenset)
    for name in STORAGE_DTYPE:
        table[("torch", name)] = refs.Marker("storage", name)
    table[("torch.storage", "UntypedStorage")] = refs.Marker("storage", "UntypedStorage")
    for name in (*RAW, *UNSUPPORTED):
        table[("torch", name)] = refs.Marker("dtype", name)
    return table


ALLOWED = _allowed()


def _refuse(module: str, name: str, where: str) -> UnsafePickleError:
    full = f"{module}.{name}"
    return UnsafePickleError(
        full,
        f"{where}: refused to load global {full!r}: a weights file may only name tensor-rebuild "
        "globals (torch._utils._rebuild_tensor_v2, torch.*Storage, collections.OrderedDict, ...); "
        "nothing from the file was executed",
    )


class RestrictedUnpickler(pickle.Unpickler):
    """`pickle.Unpickler` whose globals come from `ALLOWED` only and whose persistent ids must be
    `.pt` storages (deduplicated by key, so views share one `StorageRef`)."""

    def __init__(self, file: Any, where: str, storages: dict[str, refs.StorageRef] | None = None):
        super().__init__(file, encoding="latin1")
        self.where = where
        self.storages = storages

    def find_class(self, module: str, name: str) -> Any:
        try:
            return ALLOWED[(module, name)]
        except (KeyError, TypeError):
            raise _refuse(str(module), str(name), self.where) from None

    def persistent_load(self, pid: Any) -> Any:
        if self.storages is None:
            raise RecordImportError(f"{self.where}: unexpected persistent id {pid!r:.60}")
        ref = refs.make_storage(pid)
        known = self.storages.setdefault(ref.key, ref)
        if (known.dtype, known.numel) != (ref.dtype, ref.numel):
            raise RecordImportError(
                f"{self.where}: storage {ref.key!r} is named as {known.dtype}[{known.numel}] "
                f"and as {ref.dtype}[{ref.numel}]"
            )
        return ref if ref.view is not None else known


_STRING_OPS = {"STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE"}
_STRING_OPS |= {"SHORT_BINUNICODE", "BINUNICODE8"}
_PUT_OPS = {"PUT", "BINPUT", "LONG_BINPUT"}
_GET_OPS = {"GET", "BINGET", "LONG_BINGET"}


def prescan(
    data: bytes | memoryview, where: str, start: int = 0, budget: Budget | None = None
) -> int:
    """Check every global a pickle names, without executing anything; returns where it ends.

    It also charges `budget` (by default one for this pickle alone) with an estimate of the
    memory each opcode will make the unpickler hold (`_pickle_cost`), and refuses a memo index
    past the number of opcodes read so far: a pickler numbers its memo slots as it goes, and a
    9-byte pickle setting slot 2^28 would make the C unpickler allocate a 4 GiB memo table.

    `GLOBAL` and `INST` carry their names as arguments, `EXT1/2/4` name them through copyreg's
    extension registry. `STACK_GLOBAL` takes them from the stack,
    so the stack is simulated with just enough precision to know which strings are on it (pushed
    literally or fetched from the memo); a `STACK_GLOBAL` of anything else is refused.

    Example:
        >>> data = pickle.dumps({"a": [1, 2.0, "x"]}, protocol=4)
        >>> prescan(data, "test") == len(data)
        True
        >>> prescan(b"\\x80\\x04\\x8c\\x02os\\x8c\\x06system\\x93.", "test")
        Traceback (most recent call last):
        ...
        burn_import._errors.UnsafePickleError: test: refused to load global 'os.system': ...
    """
    stack: list[Any] = []
    marks: list[int] = []
    memo: dict[int, Any] = {}
    end = None
    if budget is None:
        budget = Budget(len(data) - start, "objects the pickle builds")
    count = memo_high = 0
    # The budget is kept in locals here (this loop runs once per opcode) and written back after.
    spent, limit = budget.spent, budget.limit
    try:
        stream = io.BytesIO(data)
        stream.seek(start)
        for op, arg, pos in pickletools.genops(stream):
            name = op.name
            count += 1
            if name in _PUT_OPS or name == "MEMOIZE":
                index = len(memo) if name == "MEMOIZE" else arg
                if index >= count:
                    raise RecordImportError(
                        f"{where}: memo index {index} at byte {pos} is past the {count} opcodes "
                        "read so far (a memo-table bomb, or a damaged pickle)"
                    )
                spent += memo_cost(index, memo_high)
                memo_high = max(memo_high, index + 1)
            cost = FIXED_COST.get(name)
            if cost is None:
                cost = opcode_cost(name, arg, len(stack) - marks[-1] if marks else len(stack))
            spent += cost
            if spent > limit:
                budget.spent = spent
                budget.refuse(f"{where}: {name} at byte {pos}")
            if name in ("GLOBAL", "INST"):
                module, _, attr = str(arg).partition(" ")
                if (module, attr) not in ALLOWED:
                    raise _refuse(module, attr, where)
            if name in ("EXT1", "EXT2", "EXT4"):  # copyreg's extension registry names a global
                module, attr = copyreg._inverted_registry.get(arg, ("<unregistered>", str(arg)))
                if (module, attr) not in ALLOWED:
                    raise _refuse(module, attr, where)
            if name == "STACK_GLOBAL":
                module, attr = (stack[-2], stack[-1]) if len(stack) >= 2 else (None, None)
                if not (isinstance(module, str) and isinstance(attr, str)):
                    raise UnsafePickleError(
                        "<computed>", f"{where}: refused STACK_GLOBAL with a computed name"
                    )
                if (module, attr) not in ALLOWED:
                    raise _refuse(module, attr, where)
            _simulate(op, arg, stack, marks, memo)
            if op.name == "STOP":
                end = pos + 1
    except RecordImportError:
        raise
    except Exception as err:  # noqa: BLE001 - any malformed opcode stream is a corrupted file
        raise RecordImportError(
            f"{where}: malformed pickle ({type(err).__name__}: {err})"
        ) from None
    budget.spent = spent
    if end is None:
        raise RecordImportError(f"{where}: the pickle has no STOP opcode (truncated)")
    return end


def _simulate(op: Any, arg: Any, stack: list, marks: list, memo: dict) -> None:
    """Apply one opcode's stack effect; values are the strings themselves or None (anything)."""
    name = op.name
    if name == "MARK":
        marks.append(len(stack))
        return
    if name in _PUT_OPS or name == "MEMOIZE":
        if stack:
            memo[len(memo) if name == "MEMOIZE" else arg] = stack[-1]
        return
    if name in _GET_OPS:
        stack.append(memo.get(arg))
        return
    before = op.stack_before
    if pickletools.markobject in before:
        # Everything since the last MARK is consumed; stack items below it as listed.
        del stack[marks.pop() if marks else 0 :]
        before = before[: before.index(pickletools.markobject)]
    if before:
        del stack[-len(before) :]
    if name in _STRING_OPS:
        stack.append(arg if isinstance(arg, str) else None)
    else:
        stack.extend(None for _ in op.stack_after)


def safe_loads(
    data: bytes | memoryview,
    where: str = "pickle",
    storages: dict[str, refs.StorageRef] | None = None,
    budget: Budget | None = None,
) -> Any:
    """Unpickle `data`, one whole pickle, with the allowlist; tensors come back as `TensorRef`s.

    Args:
        data: one pickle.
        where: names the pickle in error messages (e.g. `"model.pt: data.pkl"`).
        storages: collects the storages named by persistent ids; None forbids persistent ids.
        budget: what the objects it builds may cost (see `prescan`); by default
            `FLOOR + ratio x len(data)` bytes.

    Example:
        >>> safe_loads(pickle.dumps({"epoch": 3, "lr": [0.1, 0.01]}, protocol=2))
        {'epoch': 3, 'lr': [0.1, 0.01]}
    """
    obj, end = safe_load_at(data, 0, where, storages, budget)
    if end != len(data):
        raise RecordImportError(f"{where}: {len(data) - end} bytes after the pickle's STOP")
    return obj


def safe_load_at(
    data: bytes | memoryview,
    start: int,
    where: str,
    storages: dict[str, refs.StorageRef] | None = None,
    budget: Budget | None = None,
) -> tuple[Any, int]:
    """Unpickle the pickle starting at `data[start]` (`prescan` first); returns it and its end."""
    end = prescan(data, where, start, budget)
    file = io.BytesIO(memoryview(data)[start:end])
    try:
        obj = RestrictedUnpickler(file, where, storages).load()
    except RecordImportError:
        raise
    except RecursionError:
        raise RecordImportError(f"{where}: the pickle nests too deeply") from None
    except Exception as err:  # noqa: BLE001 - malformed structure surfaces as many error types
        raise RecordImportError(
            f"{where}: malformed pickle ({type(err).__name__}: {err})"
        ) from None
    return obj, end
