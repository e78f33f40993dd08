"""`_wgmma.Sm90aKernel`'s builds without a GPU: one NVRTC build per program and device (a
function loaded in one device's context is not valid in another's), every kernel of a program
from that build, and the dynamic shared memory a kernel takes allowed once per device past
48 KB. The real cupy is stood in for by a namespace placed as `sys.modules["cupy"]` (the class
tells the stand-in apart by that identity) and NVRTC by a recorder."""

from __future__ import annotations

import sys
import types

from burn_cuda import _platform, _wgmma


class _Module:
    def __init__(self, source, device):
        self.source, self.device, self.functions = source, device, {}

    def get_function(self, name):
        return self.functions.setdefault(name, types.SimpleNamespace(
            ptr=1000 * self.device + len(self.functions), name=name, device=self.device))  # fmt: skip


def _fake_gpu(monkeypatch):
    state = {"device": 0, "builds": [], "attributes": []}
    cp = types.SimpleNamespace(cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDevice=lambda: state["device"]),
        driver=types.SimpleNamespace(
            funcSetAttribute=lambda ptr, attr, value: state["attributes"].append((ptr, attr, value))),
    ))  # fmt: skip

    def build(cp_, source, name):
        state["builds"].append((source, state["device"], name))
        return _Module(source, state["device"])

    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setattr(_platform, "load_cupy", lambda: cp)
    monkeypatch.setattr(_wgmma, "load_cupy", lambda: cp)
    monkeypatch.setattr(_wgmma, "_nvrtc_sm90a", build)
    monkeypatch.setattr(_wgmma, "_MODULES", {})
    return state


def test_one_build_per_program_and_device(monkeypatch):
    state = _fake_gpu(monkeypatch)
    big = _wgmma.Sm90aKernel("program A", "k1", smem=64 * 1024)
    small = _wgmma.Sm90aKernel("program A", "k2")
    f0 = big.kernel
    assert big.kernel is f0 and small.kernel.device == 0  # cached; k2 from the same build
    assert state["builds"] == [("program A", 0, "k1")]
    assert state["attributes"] == [(f0.ptr, 8, 64 * 1024)]  # MAX_DYNAMIC_SHARED_SIZE_BYTES
    state["device"] = 1  # the caller switched the current device
    f1 = big.kernel
    assert f1 is not f0 and f1.device == 1
    assert state["builds"] == [("program A", 0, "k1"), ("program A", 1, "k1")]
    assert state["attributes"][-1] == (f1.ptr, 8, 64 * 1024)
    state["device"] = 0
    assert big.kernel is f0 and len(state["builds"]) == 2


def test_kernels_within_48_kb_ask_for_nothing(monkeypatch):
    state = _fake_gpu(monkeypatch)
    assert _wgmma.Sm90aKernel("program B", "k", smem=48 * 1024).kernel.device == 0
    assert state["attributes"] == []
