"""The OpenCL step-capture tape (`_capture_tape.ClTape`) on PoCL: it replays what it recorded,
reads rebound inputs, refuses a host read naming where it was, and keeps its buffers away from
other tensors until released."""

from __future__ import annotations

import numpy as np
from burn_opencl import ClArray, OpenCl
from burn_opencl._capture_tape import ClTape, copy_into, static_copy
from burn_tensor import Tensor

B = OpenCl("cpu")
D = B.device()
RT = B._rt(None)


def _t(a):
    return Tensor.from_data(np.asarray(a, np.float32), D)


def _record(x: Tensor):
    """A tape of `(x * 2 + 1).exp()` on `x`'s primitive; returns (tape, result primitive)."""
    tape = ClTape(RT)
    tape.start()
    try:
        y = ((x * 2.0) + 1.0).exp()
        prim = y.into_primitive()
    finally:
        tape.stop()
    return tape, prim, y


def test_replay_recomputes_from_the_bound_input():
    src = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 10
    x = _t(src)
    tape, prim, _ = _record(x)
    assert tape.refused is None and tape.ops
    tape.finish()
    copy_into(x.into_primitive(), _t(src + 1).into_primitive())  # new values, same buffer
    tape.replay()
    got = Tensor.from_primitive(prim, x.kind, D).numpy()
    np.testing.assert_allclose(got, np.exp((src + 1) * 2 + 1), rtol=1e-6)
    tape.release()


def test_rebind_points_the_tape_at_another_buffer():
    src = np.ones((4,), np.float32)
    x = _t(src)
    tape, prim, _ = _record(x)
    tape.finish()
    other = static_copy(_t(src * 3).into_primitive())
    tape.rebind(x.into_primitive().buf.int_ptr, other)
    tape.replay()
    got = Tensor.from_primitive(prim, x.kind, D).numpy()
    np.testing.assert_allclose(got, np.exp(src * 3 * 2 + 1), rtol=1e-6)
    tape.release()


def test_a_host_read_refuses_and_names_the_line():
    x = _t([1.0, 2.0])
    tape = ClTape(RT)
    tape.start()
    try:
        (x * 2.0).tolist()
    finally:
        tape.stop()
    assert "host read" in tape.refused and "test_capture_tape.py" in tape.refused
    assert "launch" not in RT.__dict__  # stop() put the runtime back


def test_pinned_buffers_are_never_handed_out_until_released():
    x = _t(np.zeros((256,), np.float32))
    tape, prim, y = _record(x)
    tape.finish()
    pinned = set(tape.pinned)
    del y, prim  # the result's block goes: its buffer is held for the tape, not pooled
    fresh = [ClArray.empty(RT, (256,), np.float32) for _ in range(16)]
    assert not pinned & {a.buf.int_ptr for a in fresh}
    in_use = RT.pool.in_use
    tape.release()
    assert tape.pinned == [] and RT.pool.in_use == in_use
    pins = RT.pool.capture_pins
    if pins is None:  # no tape left: the pool releases through its own method again
        assert "release" not in RT.pool.__dict__
    else:
        assert not pinned & set(pins.count)
