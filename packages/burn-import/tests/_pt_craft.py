"""Hand-built `.pt` files for the memory tests: pickles written opcode by opcode, so hostile
shapes (stride-0 broadcasts, giant dims, shared references, memo bombs) need no torch and no
committed file.

A tensor is written the way torch's protocol-2 pickler writes it:
`torch._utils._rebuild_tensor_v2(persistent_id, offset, size, stride, False, OrderedDict())`,
the persistent id being `('storage', torch.<Cls>Storage, key, 'cpu', numel)`.
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path

P2, STOP = b"\x80\x02", b"."
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def s(text: str) -> bytes:
    """BINUNICODE."""
    data = text.encode()
    return b"X" + len(data).to_bytes(4, "little") + data


def i(value: int) -> bytes:
    """The shortest int opcode: BININT1, BININT or LONG1."""
    if 0 <= value < 256:
        return b"K" + bytes([value])
    if -(1 << 31) <= value < (1 << 31):
        return b"J" + value.to_bytes(4, "little", signed=True)
    data = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(data)]) + data


def g(module: str, name: str) -> bytes:
    """GLOBAL."""
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def tup(*items: bytes) -> bytes:
    return b"(" + b"".join(items) + b"t"


def tensor(
    key: str,
    numel: int,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    offset: int = 0,
    storage: str = "FloatStorage",
    legacy: bool = False,
) -> bytes:
    """The pickle fragment that rebuilds one tensor viewing storage `key`."""
    pid = [s("storage"), g("torch", storage), s(key), s("cpu"), i(numel)]
    if legacy:
        pid.append(b"N")  # the legacy format's view slot, None for a whole storage
    args = tup(
        tup(*pid) + b"Q",
        i(offset),
        tup(*(i(n) for n in size)),
        tup(*(i(n) for n in stride)),
        b"\x89",
        g("collections", "OrderedDict") + b")R",
    )
    return g("torch._utils", "_rebuild_tensor_v2") + args + b"R"


def state_dict(entries: dict[str, bytes]) -> bytes:
    """A protocol-2 pickle of `{name: fragment}`."""
    body = b"".join(s(k) + v for k, v in entries.items())
    return P2 + b"}(" + body + b"u" + STOP


def write_zip(path: Path, pickle_bytes: bytes, storages: dict[str, bytes]) -> Path:
    """A zip-format `.pt` (torch >= 1.6): `archive/data.pkl`, `archive/data/<key>`."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickle_bytes)
        z.writestr("archive/byteorder", b"little")
        for key, data in storages.items():
            z.writestr(f"archive/data/{key}", data)
    return path


def write_legacy(path: Path, obj_pickle: bytes, storages: dict[str, tuple[int, bytes]]) -> Path:
    """A legacy `.pt`: magic, protocol, system info, the object, the keys, then the storages
    (`key -> (element count, raw bytes)`)."""
    head = (
        pickle.dumps(LEGACY_MAGIC, protocol=2)
        + pickle.dumps(1001, protocol=2)
        + pickle.dumps({"little_endian": True}, protocol=2)
    )
    tail = pickle.dumps(list(storages), protocol=2)
    body = b"".join(n.to_bytes(8, "little") + data for n, data in storages.values())
    path.write_bytes(head + obj_pickle + tail + body)
    return path


def memo_bomb(index: int) -> bytes:
    """A 9-byte pickle whose LONG_BINPUT makes the C unpickler allocate 16 x `index` bytes."""
    return P2 + b"}r" + index.to_bytes(4, "little") + STOP


def laughs(depth: int, fan: int) -> bytes:
    """'Billion laughs': level k is a list of `fan` references to level k-1, so the object
    is tiny but its tree has fan**depth leaves. Memo slot k holds level k."""
    out = P2 + b"]K\x00aq\x00"
    for k in range(1, depth + 1):
        out += b"](" + (b"h" + bytes([k - 1])) * fan + b"eq" + bytes([k]) + b"0"
    return out + b"}X\x01\x00\x00\x00wh" + bytes([depth]) + b"s" + STOP
