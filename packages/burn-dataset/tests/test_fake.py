"""FakeDataset: random items of a dataclass (or a factory), reproducible with a seed."""

from dataclasses import dataclass

import pytest
from burn_dataset import FakeDataset


@dataclass
class Inner:
    flag: bool
    data: bytes


@dataclass
class Row:
    id: int
    score: float
    name: str
    tags: list[str]
    pair: tuple[int, float]
    extra: dict[str, int]
    maybe: int | None
    inner: Inner


def test_items_have_the_declared_types_and_the_seed_fixes_them():
    ds = FakeDataset(50, Row, seed=3)
    assert len(ds) == 50 and ds.get(50) is None
    for i in range(50):
        r = ds.get(i)
        assert isinstance(r.id, int) and isinstance(r.score, float) and isinstance(r.name, str)
        assert all(isinstance(t, str) for t in r.tags) and isinstance(r.pair[1], float)
        assert all(isinstance(k, str) and isinstance(v, int) for k, v in r.extra.items())
        assert r.maybe is None or isinstance(r.maybe, int)
        assert isinstance(r.inner.flag, bool) and isinstance(r.inner.data, bytes)
    assert {ds.get(i).maybe is None for i in range(50)} == {True, False}
    assert [ds.get(i) for i in range(50)] == [FakeDataset(50, Row, seed=3).get(i) for i in range(50)]
    assert ds.get(0) != FakeDataset(50, Row, seed=4).get(0)


def test_factory_and_errors():
    ds = FakeDataset(4, lambda rng: int(rng.integers(0, 3)), seed=0)
    assert all(ds.get(i) in (0, 1, 2) for i in range(4))

    @dataclass
    class Bad:
        when: object

    with pytest.raises(TypeError, match=r"cannot make a random <class 'object'> \(at Bad.when\)"):
        FakeDataset(1, Bad)
    with pytest.raises(ValueError, match="size must be an integer >= 0"):
        FakeDataset(-1, Row)
