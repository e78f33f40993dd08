"""An estimate, per opcode, of the memory `pickle.Unpickler` spends on what a pickle builds.

One byte of pickle can cost a hundred of memory: `}` is a 64-byte dict, `\\x8f` a 216-byte set,
and `LONG_BINPUT n` grows the C unpickler's memo table to 16 x n bytes. `prescan` charges these
estimates (CPython 3.11, 64-bit; rounded up) to a `Budget` before the real unpickler runs, so a
pickle that would build gigabytes is refused having built nothing. The numbers are sizes of the
objects plus the pointer that holds each one; they need only be right within a small factor.
"""

from __future__ import annotations

import pickletools
from typing import Any

SLOT = 8  # the pointer that holds any object (stack, container, memo)
# Bytes of the object an opcode creates (plus its SLOT); opcodes not listed cost one SLOT.
_OBJECT = {
    "EMPTY_DICT": 64,
    "DICT": 64,
    "EMPTY_LIST": 56,
    "LIST": 56,
    "EMPTY_SET": 216,
    "FROZENSET": 216,
    "EMPTY_TUPLE": 0,  # a singleton
    "TUPLE1": 48,
    "TUPLE2": 56,
    "TUPLE3": 64,
    "TUPLE": 40,
    "FLOAT": 24,
    "BINFLOAT": 24,
    "INT": 32,
    "BININT": 32,
    "BININT1": 0,  # small ints are cached
    "BININT2": 32,
    "LONG": 32,
    "LONG1": 32,
    "LONG4": 32,
    # Our stand-ins for torch's rebuild calls and storages: small dataclasses and tuples.
    "REDUCE": 256,
    "NEWOBJ": 256,
    "NEWOBJ_EX": 256,
    "OBJ": 256,
    "INST": 256,
    "BUILD": 64,
    "PERSID": 256,
    "BINPERSID": 256,
}
_LENGTH_ARG = {  # the argument is the object's contents: its size counts too
    "STRING",
    "BINSTRING",
    "SHORT_BINSTRING",
    "UNICODE",
    "BINUNICODE",
    "SHORT_BINUNICODE",
    "BINUNICODE8",
    "BINBYTES",
    "SHORT_BINBYTES",
    "BINBYTES8",
    "BYTEARRAY8",
}
# Bytes per element of the opcodes that consume the items above the last MARK: a list or tuple
# slot with over-allocation; a dict or set entry with its share of the hash table (a dict's
# items are keys and values, so 32 per item is 64 per entry).
_PER_ITEM = {"APPENDS": 16, "LIST": 16, "TUPLE": 8, "SETITEMS": 32, "DICT": 32}
_PER_ITEM |= {"ADDITEMS": 64, "FROZENSET": 64}
_SINGLE = {"APPEND": 16, "SETITEM": 64}  # one element, no MARK
_FREE = {"MARK", "STOP", "PROTO", "FRAME", "POP", "POP_MARK", "PUT", "BINPUT", "LONG_BINPUT"}
_FREE |= {"MEMOIZE"}  # their memo table is charged by `memo_cost`


def opcode_cost(name: str, arg: Any, items_since_mark: int) -> int:
    """Estimated bytes that opcode `name` (with argument `arg`) makes the unpickler hold.

    `items_since_mark` is how many stack items lie above the last MARK (what TUPLE, APPENDS,
    SETITEMS... consume).

    Example:
        >>> opcode_cost("EMPTY_DICT", None, 0), opcode_cost("BINUNICODE", "abc", 0)
        (72, 67)
        >>> opcode_cost("APPENDS", None, 10)
        160
    """
    if name in _FREE:
        return 0
    if name in _SINGLE:
        return _SINGLE[name]
    if name in ("APPENDS", "SETITEMS", "ADDITEMS"):
        return _PER_ITEM[name] * items_since_mark
    cost = SLOT + _OBJECT.get(name, 0) + _PER_ITEM.get(name, 0) * items_since_mark
    if name in _LENGTH_ARG:
        cost += 56 + len(arg)
    elif name in ("LONG", "LONG1", "LONG4", "INT") and isinstance(arg, int):
        cost += arg.bit_length() // 8
    return cost


_VARIABLE = _LENGTH_ARG | set(_PER_ITEM) | {"LONG", "LONG1", "LONG4", "INT"}
# The cost of every opcode whose cost does not depend on its argument or on the stack: looked up
# first, as `prescan` charges every opcode of a pickle.
FIXED_COST = {
    op.name: opcode_cost(op.name, None, 0)
    for op in pickletools.opcodes
    if op.name not in _VARIABLE
}


def memo_cost(index: int, high_water: int) -> int:
    """Bytes the C unpickler's memo table grows by when slot `index` is set and slots up to
    `high_water` already exist: it resizes to 2 x (index + 1) pointers.

    Example:
        >>> memo_cost(1 << 20, 0)
        16777232
    """
    return max(0, 2 * SLOT * (index + 1 - high_water))
