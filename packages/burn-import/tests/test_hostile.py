"""Hostile pickles: every one is refused, names the global, and never runs its payload.

Each payload, loaded with the standard `pickle.loads`, writes a marker file (proved by
`test_payloads_are_real`, which runs them in a child process); loaded through burn_import, as a
bare pickle, as the `data.pkl` of a zip `.pt`, and as the object of a legacy `.pt`, it must raise
`UnsafePickleError` naming the global, and the marker must never appear. The bytes are built by
hand here, so no hostile file is committed.
"""

from __future__ import annotations

import copyreg
import io
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from burn_import import PyTorchFileRecorder, RecordImportError, UnsafePickleError, load_pytorch
from burn_import._unpickler import RestrictedUnpickler, safe_loads

P2, P4, STOP = b"\x80\x02", b"\x80\x04", b"."
EXT_CODE = 0xF0  # registered with copyreg only around the tests that use it


def s(text: str) -> bytes:  # BINUNICODE
    data = text.encode()
    return b"X" + len(data).to_bytes(4, "little") + data


def g(module: str, name: str) -> bytes:  # GLOBAL
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def sg(module: str, name: str) -> bytes:  # STACK_GLOBAL (protocol 4)
    return (
        b"\x8c"
        + bytes([len(module)])
        + module.encode()
        + b"\x8c"
        + bytes([len(name)])
        + (name.encode() + b"\x93")
    )


def call(fn: bytes, *args: bytes) -> bytes:  # fn(*args) through REDUCE
    return fn + b"(" + b"".join(args) + b"tR"


def lst(*items: bytes) -> bytes:
    return b"]" + b"".join(item + b"a" for item in items)


def dct(key: str, value: bytes) -> bytes:
    return b"}" + s(key) + value + b"s"


def touch(m: str) -> bytes:
    return s(f"touch {m}")


def code(m: str) -> bytes:
    return s(f"open({m!r}, 'w').close()")


# (id, refused global, builder(marker path) -> one pickle)
PAYLOADS = [
    ("os.system", "os.system", lambda m: P2 + call(g("os", "system"), touch(m)) + STOP),
    ("posix.system", "posix.system", lambda m: P2 + call(g("posix", "system"), touch(m)) + STOP),
    ("eval", "builtins.eval", lambda m: P2 + call(g("builtins", "eval"), code(m)) + STOP),
    ("exec", "builtins.exec", lambda m: P2 + call(g("builtins", "exec"), code(m)) + STOP),
    ("py2-eval", "__builtin__.eval", lambda m: P2 + call(g("__builtin__", "eval"), code(m)) + STOP),
    ("open", "builtins.open", lambda m: P2 + call(g("builtins", "open"), s(m), s("w")) + STOP),
    ("io.open", "io.open", lambda m: P2 + call(g("io", "open"), s(m), s("w")) + STOP),
    ("os.mkdir", "os.mkdir", lambda m: P2 + call(g("os", "mkdir"), s(m)) + STOP),
    ("os.popen", "os.popen", lambda m: P2 + call(g("os", "popen"), touch(m)) + STOP),
    ("getoutput", "subprocess.getoutput", lambda m: P2 + call(g("subprocess", "getoutput"), touch(m)) + STOP),
    ("Popen", "subprocess.Popen", lambda m: P2 + call(g("subprocess", "Popen"), lst(s("touch"), s(m))) + STOP),
    ("check_call", "subprocess.check_call", lambda m: P2 + call(g("subprocess", "check_call"), lst(s("touch"), s(m))) + STOP),
    ("runpy", "runpy._run_code", lambda m: P2 + call(g("runpy", "_run_code"), code(m), b"}") + STOP),
    ("cProfile", "cProfile.run", lambda m: P2 + call(g("cProfile", "run"), code(m)) + STOP),
    ("copyfile", "shutil.copyfile", lambda m: P2 + call(g("shutil", "copyfile"), s("/dev/null"), s(m)) + STOP),
    # getattr(import_module("os"), "system")("touch m"): three globals, the first is refused.
    ("getattr-chain", "builtins.getattr", lambda m: P2 + call(
        call(g("builtins", "getattr"), call(g("importlib", "import_module"), s("os")), s("system")),
        touch(m)) + STOP),
    ("stack-global", "os.system", lambda m: P4 + call(sg("os", "system"), touch(m)) + STOP),
    ("dotted-stack-global", "pathlib.Path.touch", lambda m: P4 + call(
        sg("pathlib", "Path.touch"), call(sg("pathlib", "Path"), s(m))) + STOP),
    ("INST", "os.system", lambda m: b"(" + touch(m) + b"ios\nsystem\n" + STOP),
    ("OBJ", "os.system", lambda m: P2 + b"(" + g("os", "system") + touch(m) + b"o" + STOP),
    ("nested", "os.system", lambda m: P2 + dct("state", lst(dct("w", call(g("os", "system"), touch(m))))) + STOP),
    # Inside the arguments of an allowed tensor rebuild: the allowed global comes first.
    ("in-rebuild-args", "os.system", lambda m: P2 + call(
        g("torch._utils", "_rebuild_tensor_v2"), call(g("os", "system"), touch(m)), b"K\x00") + STOP),
    # Inside a persistent id, the way .pt files reference storages.
    ("in-persistent-id", "os.system", lambda m: P2 + b"(" + s("storage") + call(
        g("os", "system"), touch(m)) + s("0") + s("cpu") + b"K\x01tQ" + STOP),
    ("EXT1", "os.system", lambda m: P2 + b"\x82" + bytes([EXT_CODE]) + b"(" + touch(m) + b"tR" + STOP),
]  # fmt: skip
# Globals that are not code execution by themselves but are no tensor rebuild either.
OTHER_REFUSALS = [
    ("custom-class", "__main__.Evil", P2 + call(g("__main__", "Evil")) + STOP),
    ("whole-module", "torch.nn.modules.linear.Linear", P2 + g("torch.nn.modules.linear", "Linear") + b")\x81" + STOP),
    ("numpy-array", "numpy.core.multiarray._reconstruct", P2 + call(g("numpy.core.multiarray", "_reconstruct")) + STOP),
    ("torch.load", "torch.load", P2 + call(g("torch", "load"), s("x.pt")) + STOP),
]  # fmt: skip


@pytest.fixture
def ext_registered():
    copyreg.add_extension("os", "system", EXT_CODE)
    try:
        yield
    finally:
        copyreg.remove_extension("os", "system", EXT_CODE)


def marker_for(tmp_path: Path, ident: str) -> Path:
    return tmp_path / f"marker-{ident}"


def test_enough_payloads():
    assert len(PAYLOADS) >= 20


def test_payloads_are_real(tmp_path):
    """The standard unpickler runs every payload (in a child process): the markers appear."""
    blobs = {ident: build(str(marker_for(tmp_path, ident))) for ident, _, build in PAYLOADS}
    (tmp_path / "blobs.pkl").write_bytes(pickle.dumps(blobs))
    # A victim of the "in-rebuild-args" payload has torch; where torch is not installed, a
    # stand-in torch._utils lets the standard unpickler get past that allowed global to the payload.
    script = f"""
import copyreg, importlib.util, pickle, sys, time, pathlib, types
if importlib.util.find_spec("torch") is None:
    utils = types.ModuleType("torch._utils")
    utils._rebuild_tensor_v2 = lambda *args: None
    sys.modules["torch"], sys.modules["torch._utils"] = types.ModuleType("torch"), utils
copyreg.add_extension("os", "system", {EXT_CODE})
for ident, blob in pickle.loads(pathlib.Path({str(tmp_path / "blobs.pkl")!r}).read_bytes()).items():
    try:
        pickle.loads(blob)
    except Exception:
        pass  # several payloads fail after running (e.g. the persistent id one)
time.sleep(0.5)  # Popen / popen children finish on their own
"""
    subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, check=True, capture_output=True, timeout=120
    )
    missing = [ident for ident, _, _ in PAYLOADS if not marker_for(tmp_path, ident).exists()]
    assert missing == []


@pytest.mark.parametrize(("ident", "name", "build"), PAYLOADS, ids=[p[0] for p in PAYLOADS])
@pytest.mark.parametrize("container", ["pickle", "unpickler-only", "zip", "legacy", "legacy-magic"])
def test_payload_refused(ident, name, build, container, tmp_path, ext_registered):
    marker = marker_for(tmp_path, ident)
    blob = build(str(marker))
    with pytest.raises(UnsafePickleError) as err:
        load_container(blob, container, tmp_path)
    assert err.value.global_name == name
    assert repr(name) in str(err.value) and "nothing from the file was executed" in str(err.value)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("ident", "name", "blob"), OTHER_REFUSALS, ids=[p[0] for p in OTHER_REFUSALS]
)
@pytest.mark.parametrize("container", ["pickle", "unpickler-only", "zip", "legacy"])
def test_other_globals_refused(ident, name, blob, container, tmp_path):
    with pytest.raises(UnsafePickleError) as err:
        load_container(blob, container, tmp_path)
    assert err.value.global_name == name


def load_container(blob: bytes, container: str, tmp_path: Path):
    if container == "pickle":
        return safe_loads(blob, "test", {})
    if container == "unpickler-only":  # without the prescan: find_class alone must refuse
        return RestrictedUnpickler(io.BytesIO(blob), "test", {}).load()
    path = tmp_path / "hostile.pt"
    if container == "zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("hostile/data.pkl", blob)
            z.writestr("hostile/byteorder", b"little")
    else:
        magic = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)
        rest = pickle.dumps(1001, protocol=2) + pickle.dumps({"little_endian": True}, protocol=2)
        if container == "legacy":
            data = magic + rest + blob + pickle.dumps([], protocol=2)
        else:  # the very first pickle of the file is the hostile one
            data = blob + rest
        path.write_bytes(data)
    return PyTorchFileRecorder().load(path)


def test_stack_global_of_a_computed_name_is_refused(tmp_path):
    # The module name comes from a memo slot holding a tuple, not a literal string.
    blob = P4 + b"\x8c\x02os\x94" + b"\x8c\x06system\x94" + b")\x94h\x02h\x01\x93" + STOP
    with pytest.raises(UnsafePickleError, match="computed name"):
        safe_loads(blob, "test")


def test_unregistered_extension_is_refused():
    with pytest.raises(UnsafePickleError, match="<unregistered>"):
        safe_loads(P2 + b"\x82\xf1)R" + STOP, "test")


def test_allowed_callables_refuse_misuse():
    with pytest.raises(RecordImportError, match="_codecs.encode is only allowed"):
        safe_loads(P2 + call(g("_codecs", "encode"), s("x"), s("rot13")) + STOP)
    with pytest.raises(RecordImportError, match="expected a storage"):
        safe_loads(P2 + call(g("torch._utils", "_rebuild_tensor_v2"), s("x"), b"K\x00)))") + STOP)
    with pytest.raises(RecordImportError, match="unexpected persistent id"):
        safe_loads(P2 + b"(" + s("storage") + b"tQ" + STOP)  # no storages expected here
    with pytest.raises(RecordImportError, match="BUILD"):  # setting state on a tensor
        safe_loads(P2 + call(g("torch._utils", "_rebuild_tensor_v2"), b"(" + s("storage") +
                   g("torch", "FloatStorage") + s("0") + s("cpu") + b"K\x01tQ", b"K\x00", b")",
                   b")") + b"}b" + STOP, "t", {})  # fmt: skip


def test_plain_containers_and_protocol2_bytes_load():
    data = {"a": [1, 2.5, None, True], "b": (b"\x00\xff", "x"), "c": {3, 4}, "d": frozenset([5])}
    for protocol in (0, 1, 2, 3, 4, 5):
        assert safe_loads(pickle.dumps(data, protocol=protocol)) == data


def test_ordered_dict_metadata_build_is_harmless():
    from collections import OrderedDict

    od = OrderedDict(w=1)
    od._metadata = {"": {"version": 1}}  # what torch's state_dict() carries
    loaded = safe_loads(pickle.dumps(od, protocol=2))
    assert loaded == {"w": 1} and not hasattr(loaded, "_metadata")


def test_hostile_state_dict_through_load_pytorch(tmp_path):
    # A realistic attack: a valid-looking state dict where one entry is a payload.
    marker = marker_for(tmp_path, "sd")
    blob = P2 + b"}" + s("fc.weight") + call(g("posix", "system"), touch(str(marker))) + b"s" + STOP
    with zipfile.ZipFile(tmp_path / "m.pt", "w") as z:
        z.writestr("m/data.pkl", blob)
    with pytest.raises(UnsafePickleError, match="posix.system"):
        load_pytorch(tmp_path / "m.pt")
    assert not marker.exists()
