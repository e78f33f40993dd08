"""Step capture's resident kernels (`_capture_resident`: random draws and Adam updates reading
their per-call scalars from the tape's device block) on the CPU stand-in (`cpu_backend.py`):
`philox_random_at`, `adam_update_at`, `adam_many_at` and `resident_refresh` as burn_cuda
launches them, bit for bit against the eager kernels; and their CUDA text through
`nvcc --ptx -arch=sm_90` where nvcc is installed.

The stand-in runs a kernel at its launch, where a CUDA graph runs after the recording wrote
the block (`CudaTape._end`): `_Synced` writes the block right after each op put its words in.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_cuda import _kernel_source, _random
from burn_cuda._capture_resident import BASE, SEED, WORDS, ResidentBlock
from burn_cuda._optim import _scalars
from burn_gpu import adam_many_program, adam_program, random_program
from burn_tensor import Distribution
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

LAUNCHED: set = set()


def _env(**options):
    with cuda_on_cpu_backend(FakeCupy(), **options) as (backend, cp):
        yield backend, cp
        LAUNCHED.update(launch.name for launch in cp.launches)


@pytest.fixture
def env():
    yield from _env()


@pytest.fixture
def env64():
    yield from _env(float_dtype="float64", int_dtype="int64")


class _Synced(ResidentBlock):
    """A block written to the device as soon as an op put its words in (see the module)."""

    def draw(self, *args):
        out = super().draw(*args)
        self.refresh()
        return out

    def adam(self, *args):
        out = super().adam(*args)
        self.refresh()
        return out


def _draws(B, dev, int_dtype):
    f = B.float_dtype
    return [
        B.float_random((35, 20), Distribution.bernoulli(0.3), dev, f),
        B.float_random((7, 3), Distribution.normal(1.0, 2.0), dev, f),
        B.float_random((0,), Distribution.default(), dev, f),  # counts a call, launches none
        B.int_random((300,), Distribution.uniform(-3.0, 9.0), dev, int_dtype),
        B.float_random((513,), Distribution.uniform(-2.0, 3.0), dev, f),
    ]


@pytest.mark.parametrize("wide", [False, True], ids=["f32", "f64"])
def test_random_at_draws_the_eager_bits_and_advances_the_counter(request, wide):
    B, cp = request.getfixturevalue("env64" if wide else "env")
    dev = B.device()
    B.seed(99, dev)
    _random.reserve(dev, (1 << 32) - 2)  # the step's calls cross the counter's low word
    eager = [np.asarray(x).tobytes() for x in _draws(B, dev, B.int_dtype)]
    after = _random.snapshot()[dev]
    B.seed(99, dev)
    _random.reserve(dev, (1 << 32) - 2)
    block = _Synced(cp, dev.index)
    with block.running(0):
        got = [np.asarray(x).tobytes() for x in _draws(B, dev, B.int_dtype)]
    assert got == eager
    assert block.refused is None and block.draws == 5
    assert _random.snapshot()[dev] == after
    assert any(x.name == "philox_random_at" for x in cp.launches)


def test_adam_at_gives_the_eager_bits_one_tensor_and_many(env):
    B, cp = env
    rng = np.random.default_rng(3)
    sizes = [300, 1, 77]
    ps = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    gs = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    m1s = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    m2s = [rng.uniform(0, 1, n).astype(np.float32) for n in sizes]
    fk = lambda xs: [asfake(x) for x in xs]  # noqa: E731
    hp = (3e-3, 0.9, 0.999, 1e-8, 4)

    def both():
        one = B.float_adam_update(*fk([ps[0], gs[0], m1s[0], m2s[0]]), *hp)
        half = B.float_adam_update(*fk([p.astype(np.float16) for p in (ps[2], gs[2])]),
                                   None, None, *hp)  # fmt: skip
        many = B.float_adam_update_many(fk(ps), fk(gs), fk(m1s), fk(m2s), *hp)
        return [np.asarray(a).tobytes() for a in (*one, *half, *many[0], *many[1], *many[2])]

    eager = both()
    block = _Synced(cp, 0)
    with block.running(0):
        got = both()
    assert got == eager
    names = {x.name for x in cp.launches}
    assert {"adam_update_at", "adam_many_at"} <= names
    # every update of the step had the same scalars: one set of words (float32)
    assert len(block.updates) == 1 and block.free == 5, block.updates


def test_adam_many_at_float64(env64):
    B, cp = env64
    rng = np.random.default_rng(4)
    ps = [asfake(rng.standard_normal(n)) for n in (40, 700)]
    gs = [asfake(rng.standard_normal(n)) for n in (40, 700)]
    hp = (1e-2, 0.8, 0.99, 1e-7, 1)
    eager = B.float_adam_update_many(ps, gs, None, None, *hp)
    block = _Synced(cp, 0)
    with block.running(0):
        got = B.float_adam_update_many(ps, gs, None, None, *hp)
    for a, b in zip(eager, got):
        for x, y in zip(a, b):
            assert np.asarray(x).tobytes() == np.asarray(y).tobytes()
    # float64 scalars: three whole words
    w = block.updates[0][0]
    want = np.array(_scalars(np.dtype(np.float64), *hp)[4:])
    assert np.asarray(block.words)[w : w + 3].view(np.float64).tobytes() == want.tobytes()


def test_a_replay_writes_its_words_with_one_launch(env):
    # recorded: two draws and two Adam updates of other step counts; a replay's words: the
    # device's counter now (advanced by the two draws), the bound lr and time of each call
    B, cp = env
    dev = B.device()
    B.seed(5, dev)
    block = ResidentBlock(cp, dev.index)
    f32 = np.dtype(np.float32)
    with block.running(0):
        B.float_random((10,), Distribution.default(), dev, B.float_dtype)
        B.float_random((10,), Distribution.default(), dev, B.float_dtype)
    with block.running(1):
        a1 = block.adam(f32, 1e-2, 0.9, 0.999, 1e-8, 3)
    with block.running(2):
        a2 = block.adam(f32, 1e-2, 0.9, 0.999, 1e-8, 7)
        assert block.adam(f32, 1e-2, 0.9, 0.999, 1e-8, 7) == a2  # shared words
    assert a2 - a1 == 24 and len(block.updates) == 2
    B.seed(11, dev)
    _random.reserve(dev, 40)
    bound = {1: {"lr": 5e-4, "time": 4}, 2: {"time": 8}}  # call 2: a fixed learning rate
    launches = len(cp.launches)
    block.bind(bound.__getitem__, _random.reserve)
    block.refresh()
    assert [x.name for x in cp.launches[launches:]] == ["resident_refresh"]
    words = np.asarray(block.words)
    assert words[SEED] == 11 and words[BASE] == 40
    assert _random.snapshot()[dev] == [11, 42]
    for w, (lr, t) in ((block.updates[0][0], (5e-4, 4)), (block.updates[1][0], (1e-2, 8))):
        want = np.array(_scalars(f32, lr, 0.9, 0.999, 1e-8, t)[4:], np.float32)
        assert words[w : w + 2].view(np.float32)[:3].tobytes() == want.tobytes()
    assert words.size == WORDS


def test_a_draw_the_block_cannot_serve_is_drawn_eagerly_and_refused(env):
    B, cp = env
    dev = B.device()
    B.seed(21, dev)
    want = np.asarray(B.float_random((50,), Distribution.default(), dev, B.float_dtype))
    B.seed(21, dev)
    block = _Synced(cp, dev.index)
    with block.running(0):
        B.float_random((50,), Distribution.default(), dev, B.float_dtype)
        B.seed(21, dev)  # a reseed inside the step: this draw takes its pair as arguments
        got = np.asarray(B.float_random((50,), Distribution.default(), dev, B.float_dtype))
    assert got.tobytes() == want.tobytes()
    assert "reseeded" in block.refused


def test_every_resident_kernel_ran():
    want = set(_kernel_source.RESIDENT) | {"philox_random_at", "adam_many_at"}
    assert want <= LAUNCHED, sorted(want - LAUNCHED)


SOURCES = {
    "philox_f32": lambda: random_program("float32", "cuda", from_block=True),
    "philox_i64": lambda: random_program("int64", "cuda", True, from_block=True),
    "adam_bf16": lambda: adam_program("bfloat16", "cuda", "float32", scalars_from=True),
    "adam_many_f64": lambda: adam_many_program("float64", 32, scalars_from=True),
    "adam_many_f16": lambda: adam_many_program("float16", 32, scalars_from=True),
    "refresh": lambda: _kernel_source.SOURCES["resident_refresh"](),
}


@pytest.mark.parametrize("stem", list(SOURCES))
def test_resident_kernels_compile_for_sm90(nvcc_ptx, stem):
    proc, ptx = nvcc_ptx(stem, SOURCES[stem]())
    assert proc.returncode == 0, proc.stderr[:3000]
    text = ptx.read_text()
    name = {"philox": "philox_random_at", "adam": "adam_update_at", "adam_many": "adam_many_at",
            "refresh": "resident_refresh"}[stem.rsplit("_", 1)[0]]  # fmt: skip
    assert f".entry {name}(" in text


def test_another_threads_draw_between_the_steps_makes_the_recording_untrusted(env):
    B, cp = env
    dev = B.device()
    draw = lambda: np.asarray(B.float_random((9,), Distribution.default(), dev, B.float_dtype))  # noqa: E731
    B.seed(3, dev)
    want = [draw(), (_random.reserve(dev, 1), draw())[1]]
    B.seed(3, dev)
    block = _Synced(cp, dev.index)
    with block.running(0):
        got = [draw()]
        _random.reserve(dev, 1)  # another thread's draw, between the step's two
        got.append(draw())
    assert [a.tobytes() for a in got] == [a.tobytes() for a in want]  # the recording: right
    assert block.foreign and block.refused is None  # recorded again, not given up


def test_bfloat16_draws_and_updates_at_give_the_eager_bits():
    # the half table's Adam (`_half_reduce.adam_update`, float32 moments here), the half
    # multi-tensor kernel and bfloat16's clipped draw (`_bf16.random` -> `sample`)
    from burn_tensor import DType, Tensor
    from burn_tensor.ops import adam_update, adam_update_many

    rng = np.random.default_rng(6)
    with cuda_on_cpu_backend(FakeCupy(), float_dtype="bfloat16") as (B, cp):
        d = B.device()
        ps = [Tensor.from_data(rng.standard_normal(n), d) for n in (300, 45)]
        gs = [Tensor.from_data(rng.standard_normal(n), d) for n in (300, 45)]
        m1 = Tensor.from_data(rng.standard_normal(300) * 1e-3, d).cast(DType.F32)
        m2 = Tensor.from_data(rng.random(300) * 1e-6, d).cast(DType.F32)
        hp = {"lr": 2e-3, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-8}

        def run():
            B.seed(17, d)
            out = [Tensor.random([257], Distribution.uniform(-1.0, 1.0), d)]
            out += adam_update(ps[0], gs[0], m1, m2, time=3, **hp)
            for xs in adam_update_many(ps, gs, None, None, time=1, **hp):
                out += xs
            return [np.asarray(t.into_data().array).tobytes() for t in out]

        eager = run()
        block = _Synced(cp, d.index)
        with block.running(0):
            got = run()
        assert got == eager
        names = {x.name for x in cp.launches}
        LAUNCHED.update(names)
        assert {"philox_random_at", "adam_update_at", "adam_many_at"} <= names, names
