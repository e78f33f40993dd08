"""LR schedulers: values against their formulas, Burn's validation, records, config JSON."""

import math

import pytest
from burn_optim import lr_scheduler as ls


def take(s, n):
    return [s.step() for _ in range(n)]


def test_constant_and_float():
    assert take(ls.ConstantLr(0.3), 3) == [0.3] * 3
    assert ls.as_lr_scheduler(2e-3).step() == 2e-3
    sched = ls.LinearLrSchedulerConfig(0.1, 0.0, 3).init()
    assert ls.as_lr_scheduler(sched) is sched
    with pytest.raises(TypeError):
        ls.as_lr_scheduler("fast")


def test_linear():
    s = ls.LinearLrSchedulerConfig(0.9, 0.5, 4).init()
    assert [round(v, 12) for v in take(s, 7)] == [0.9, 0.8, 0.7, 0.6, 0.5, 0.5, 0.5]
    with pytest.raises(ValueError, match="Initial"):
        ls.LinearLrSchedulerConfig(0.0, 0.5, 4).init()
    with pytest.raises(ValueError, match="Final"):
        ls.LinearLrSchedulerConfig(0.5, 1.5, 4).init()
    with pytest.raises(ValueError, match="iterations"):
        ls.LinearLrSchedulerConfig(0.5, 0.1, 0).init()


def test_cosine_restarts():
    cfg = ls.CosineAnnealingLrSchedulerConfig(0.5, 4).with_min_lr(0.1)
    assert cfg.min_lr == 0.1 and ls.CosineAnnealingLrSchedulerConfig(0.5, 4).min_lr == 0.0
    got = take(cfg.init(), 11)
    want = [0.1 + 0.2 * (1 + math.cos(math.pi * (i % 5) / 4)) for i in range(11)]
    assert got == pytest.approx(want, abs=1e-15)
    with pytest.raises(ValueError, match="Minimum"):
        ls.CosineAnnealingLrSchedulerConfig(0.5, 4, min_lr=0.6).init()


def test_exponential():
    got = take(ls.ExponentialLrSchedulerConfig(0.5, 0.9).init(), 5)
    assert got == pytest.approx([0.5 * 0.9**i for i in range(5)], rel=1e-14)
    with pytest.raises(ValueError, match="Gamma"):
        ls.ExponentialLrSchedulerConfig(0.5, 1.5).init()


def test_noam():
    cfg = ls.NoamLrSchedulerConfig(2.0)
    assert (cfg.warmup_steps, cfg.model_size) == (4000, 512)
    got = take(cfg.with_warmup_steps(10).init(), 30)
    want = [2.0 * 512**-0.5 * min(s**-0.5, s * 10**-1.5) for s in range(1, 31)]
    assert got == pytest.approx(want, rel=1e-14)
    assert max(got) == got[9]  # peak at the end of warm-up
    with pytest.raises(ValueError):
        ls.NoamLrSchedulerConfig(1.0, warmup_steps=0).init()
    for bad in (dict(warmup_steps=-4), dict(model_size=-1)):
        with pytest.raises(ValueError):
            ls.NoamLrSchedulerConfig(1.0, **bad).init()


def test_step(caplog):
    s = ls.StepLrSchedulerConfig(1.0, 3).init()
    assert ls.StepLrSchedulerConfig(1.0, 3).gamma == 0.1
    assert take(s, 7) == pytest.approx([1, 1, 1, 0.1, 0.1, 0.1, 0.01])
    with pytest.raises(ValueError):
        ls.StepLrSchedulerConfig(1.0, 0).init()
    with pytest.raises(ValueError):
        ls.StepLrSchedulerConfig(1.0, -2).init()
    ls.StepLrSchedulerConfig(1.0, 2, gamma=2.0).init()
    assert "out of range" in caplog.text


def test_composed_reductions():
    base = (
        ls.ComposedLrSchedulerConfig()
        .linear(ls.LinearLrSchedulerConfig(1.0, 0.5, 2))
        .cosine(ls.CosineAnnealingLrSchedulerConfig(1.0, 2))
    )
    lin, cos = [1.0, 0.75, 0.5], [1.0, 0.5, 0.0]
    assert base.reduction is ls.SchedulerReduction.Prod
    assert take(base.init(), 3) == pytest.approx([a * b for a, b in zip(lin, cos)])
    s = base.with_reduction(ls.SchedulerReduction.Sum).init()
    assert take(s, 3) == pytest.approx([a + b for a, b in zip(lin, cos)])
    s = base.with_reduction(ls.SchedulerReduction.Avg).init()
    assert take(s, 3) == pytest.approx([(a + b) / 2 for a, b in zip(lin, cos)])
    assert ls.ComposedLrSchedulerConfig().schedulers == []


ALL = [
    ls.LinearLrSchedulerConfig(0.9, 0.1, 7),
    ls.CosineAnnealingLrSchedulerConfig(0.5, 6, min_lr=0.01),
    ls.ExponentialLrSchedulerConfig(0.5, 0.95),
    ls.NoamLrSchedulerConfig(1.0, warmup_steps=5, model_size=16),
    ls.StepLrSchedulerConfig(0.4, 3, gamma=0.5),
    ls.ComposedLrSchedulerConfig()
    .noam(ls.NoamLrSchedulerConfig(1.0, warmup_steps=3))
    .exponential(ls.ExponentialLrSchedulerConfig(0.9, 0.9)),
]


@pytest.mark.parametrize("cfg", ALL, ids=lambda c: type(c).__name__)
def test_record_resume_and_json(cfg, tmp_path):
    from burn_record import NamedMpkFileRecorder

    full = take(cfg.init(), 12)
    first = cfg.init()
    head = take(first, 5)
    # Through a real recorder file, as a checkpoint would.
    path = NamedMpkFileRecorder().record({"scheduler": first.to_record()}, tmp_path / "sched")
    record = NamedMpkFileRecorder().load(path)["scheduler"]
    resumed = cfg.init().load_record(record)
    assert head + take(resumed, 7) == full  # exact, not approx
    again = type(cfg).from_json(cfg.to_json())
    assert again == cfg and take(again.init(), 12) == full


def test_composed_record_mismatch():
    s = ls.ComposedLrSchedulerConfig().linear(ls.LinearLrSchedulerConfig(1.0, 0.5, 2)).init()
    with pytest.raises(ValueError):
        s.load_record({"schedulers": [{"Noam": 3}]})
