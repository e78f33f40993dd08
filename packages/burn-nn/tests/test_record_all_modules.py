"""Issue 5 "Must show": every recorder x every precision on ONE model holding every module kind.

The model (`AllModules`) holds every built-in `burn_nn` module kind that has state, the stateless
ones (pools, dropout, activations) as plain fields, a list and a dict of submodules, BatchNorm's
running statistics (`RunningState`, set to non-default values), and int and bool tensors. Modules
can hold non-float state the way Burn does (`Param<Tensor<B, D, Int>>` / `Bool`): a `Param` wrapping
an Int or Bool tensor (`require_grad=False`) is visited and recorded like any parameter, with its
id; here it sits in a nested submodule (`Counters`) so the record holds int/bool `ParamRecord`s at
depth. Tensor fields that are constants (PositionalEncoding's sinusoids, RotaryEncoding's cos/sin)
are not recorded (Burn), so those modules contribute an empty record.

For every recorder x {Double, Full, Half}:
  * ParamIds are preserved (the fresh module has different random ids before loading);
  * floats equal the original exactly for Double/Full and `np.float16(x).astype(np.float32)` for
    Half; int tensors equal exactly (they fit i16); bool tensors equal exactly;
  * the raw record carries the settings' dtypes (F64/F32/F16, I64/I32/I16, BOOL);
  * the loaded module's dtypes are the fresh module's dtypes (loading converts);
  * file recorders go through `save_file`/`load_file`; bytes recorders go bytes -> a new module
    built on a fresh device of another backend instance (float64), the embedded-model case.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_record import (
    BinBytesRecorder,
    BytesRecorder,
    DoublePrecisionSettings,
    FileRecorder,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    NamedMpkBytesRecorder,
    ParamRecord,
    Recorder,
    flatten,
)
from burn_record import __all__ as record_names
from burn_tensor import Tensor

import burn_record
from burn_nn import (
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2dConfig,
    AvgPool1dConfig,
    AvgPool2dConfig,
    BatchNormConfig,
    BiLstmConfig,
    Conv1dConfig,
    Conv2dConfig,
    ConvTranspose1dConfig,
    ConvTranspose2dConfig,
    DropoutConfig,
    EmbeddingConfig,
    Gelu,
    GroupNormConfig,
    GruConfig,
    InstanceNormConfig,
    LayerNormConfig,
    LeakyReluConfig,
    LinearConfig,
    LstmConfig,
    MaxPool1dConfig,
    MaxPool2dConfig,
    Module,
    MultiHeadAttentionConfig,
    Param,
    PositionalEncodingConfig,
    PositionWiseFeedForwardConfig,
    PReluConfig,
    Relu,
    RmsNormConfig,
    RotaryEncodingConfig,
    Sigmoid,
    SwiGluConfig,
    Tanh,
    TransformerDecoderConfig,
    TransformerEncoderConfig,
)

# Every concrete recorder class once (DefaultFileRecorder is an alias of NamedMpkFileRecorder).
RECORDERS = sorted(
    {
        obj
        for obj in (getattr(burn_record, n) for n in record_names)
        if isinstance(obj, type) and issubclass(obj, Recorder) and obj._payload is not None
    },
    key=lambda c: c.__name__,
)
SETTINGS = [DoublePrecisionSettings, FullPrecisionSettings, HalfPrecisionSettings]
WIRE_DTYPES = {  # settings -> (float dtype name, int dtype name) stored in the record
    DoublePrecisionSettings: ("F64", "I64"),
    FullPrecisionSettings: ("F32", "I32"),
    HalfPrecisionSettings: ("F16", "I16"),
}

D = 8  # d_model of the sequence modules


class Counters(Module):
    """Non-float state: an int step counter, an int table and a bool mask, each a Param."""

    step: Param
    table: Param
    mask: Param


class AllModules(Module):
    linear: Module
    conv1d: Module
    conv2d: Module
    conv_transpose1d: Module
    conv_transpose2d: Module
    batch_norm: Module
    layer_norm: Module
    group_norm: Module
    instance_norm: Module
    rms_norm: Module
    embedding: Module
    prelu: Module
    swiglu: Module
    lstm: Module
    bilstm: Module
    gru: Module
    mha: Module
    encoder: Module
    decoder: Module
    pwff: Module
    positional: Module
    rotary: Module
    max_pool1d: Module
    max_pool2d: Module
    avg_pool1d: Module
    avg_pool2d: Module
    adaptive1d: Module
    adaptive2d: Module
    dropout: Module
    relu: Module
    gelu: Module
    leaky: Module
    blocks: list
    heads: dict
    counters: Counters


def build(device, seed: int) -> AllModules:
    """The model with values drawn from `seed` (ids are always fresh random ParamIds)."""
    device.seed(seed)
    rng = np.random.default_rng(seed)
    bn = BatchNormConfig(3).init(device)
    # Running statistics with non-default values, so a load that skipped them would be caught.
    bn.running_mean.update(Tensor.from_data(rng.standard_normal(3).astype(np.float32), device))
    bn.running_var.update(Tensor.from_data(rng.uniform(0.5, 2, 3).astype(np.float32), device))
    step = Tensor.from_data(np.array([int(rng.integers(0, 30000))], dtype=np.int64), device)
    table = Tensor.from_data(rng.integers(-32768, 32768, size=(3, 4)), device)
    mask = Tensor.from_data(rng.random((2, 5)) < 0.5, device)
    return AllModules(
        linear=LinearConfig(4, 3).init(device),
        conv1d=Conv1dConfig(2, 3, 3).init(device),
        conv2d=Conv2dConfig([2, 4], [3, 3], groups=2).init(device),
        conv_transpose1d=ConvTranspose1dConfig([2, 3], 3).init(device),
        conv_transpose2d=ConvTranspose2dConfig([2, 3], [2, 2]).init(device),
        batch_norm=bn,
        layer_norm=LayerNormConfig(4).init(device),
        group_norm=GroupNormConfig(2, 4).init(device),
        instance_norm=InstanceNormConfig(4).init(device),
        rms_norm=RmsNormConfig(4).init(device),
        embedding=EmbeddingConfig(10, 4).init(device),
        prelu=PReluConfig(num_parameters=3).init(device),
        swiglu=SwiGluConfig(4, 6, bias=True).init(device),
        lstm=LstmConfig(4, 5, True).init(device),
        bilstm=BiLstmConfig(4, 5, True).init(device),
        gru=GruConfig(4, 5, True).init(device),
        mha=MultiHeadAttentionConfig(D, 2).init(device),
        encoder=TransformerEncoderConfig(D, 16, 2, 2).init(device),
        decoder=TransformerDecoderConfig(D, 16, 2, 1, norm_first=True).init(device),
        pwff=PositionWiseFeedForwardConfig(D, 16).init(device),
        positional=PositionalEncodingConfig(D, max_sequence_size=16).init(device),
        rotary=RotaryEncodingConfig(16, D).init(device),
        max_pool1d=MaxPool1dConfig(2).init(),
        max_pool2d=MaxPool2dConfig([2, 2]).init(),
        avg_pool1d=AvgPool1dConfig(2).init(),
        avg_pool2d=AvgPool2dConfig([2, 2]).init(),
        adaptive1d=AdaptiveAvgPool1dConfig(3).init(),
        adaptive2d=AdaptiveAvgPool2dConfig([2, 2]).init(),
        dropout=DropoutConfig(0.1).init(),
        relu=Relu(),
        gelu=Gelu(),
        leaky=LeakyReluConfig().init(),
        blocks=[LinearConfig(4, 4).init(device), Sigmoid(), LayerNormConfig(4).init(device)],
        heads={
            "cls": LinearConfig(4, 2, bias=False).init(device),
            "seq": GruConfig(2, 3, False).init(device),
            "act": Tanh(),
        },
        counters=Counters(
            step=Param(None, step, require_grad=False),
            table=Param(None, table, require_grad=False),
            mask=Param(None, mask, require_grad=False),
        ),
    )


def state(model: Module) -> dict[str, tuple[str, np.ndarray, object]]:
    """path -> (param id, values, dtype)."""
    return {
        path: (str(p.id), p.val().numpy(), p.val().dtype) for path, p in model.named_parameters()
    }


@pytest.fixture(scope="module")
def original():
    model = build(NdArray().device(), seed=1)
    return model, state(model)


def expected_values(arr: np.ndarray, settings) -> np.ndarray:
    """What a round trip through `settings` must give, computed with numpy only."""
    if arr.dtype.kind == "f" and settings is HalfPrecisionSettings:
        return np.float16(arr).astype(arr.dtype)
    return arr


def test_model_covers_every_kind(original):
    model, st = original
    paths = set(st)
    # Running stats, list / dict containers, nested int/bool params are all recorded.
    for p in (
        "batch_norm.running_mean",
        "batch_norm.running_var",
        "blocks.0.weight",
        "blocks.2.gamma",
        "heads.cls.weight",
        "heads.seq.new_gate.input_transform.weight",
        "counters.step",
        "counters.table",
        "counters.mask",
        "bilstm.reverse_lstm.cell_gate.hidden_transform.bias",
        "decoder.layers.0.cross_attn.output.weight",
        "encoder.layers.1.pwff.linear_outer.bias",
        "swiglu.linear_inner.bias",
        "prelu.alpha",
        "group_norm.gamma",
        "instance_norm.beta",
        "rms_norm.gamma",
        "embedding.weight",
        "conv_transpose2d.weight",
        "mha.query.weight",
    ):
        assert p in paths, p
    kinds = {str(v[2]) for v in st.values()}
    assert len(kinds) == 3, kinds  # float, int, bool dtypes
    # Stateless fields are constants: no record entry under them.
    rec = model.into_record()
    for name in (
        "max_pool1d",
        "avg_pool2d",
        "adaptive2d",
        "dropout",
        "relu",
        "gelu",
        "leaky",
        "positional",
        "rotary",
    ):
        assert not flatten(rec.get(name) or {}), name
    assert len(RECORDERS) == 13, [c.__name__ for c in RECORDERS]


def _check_loaded(loaded: Module, fresh: Module, st: dict, settings) -> None:
    got = state(loaded)
    fresh_st = state(fresh)
    assert list(got) == list(st)
    for path, (pid, arr, _dtype) in st.items():
        gid, garr, gdtype = got[path]
        assert gid == pid, f"{path}: ParamId not preserved"
        assert gdtype == fresh_st[path][2], f"{path}: {gdtype} is not the module's dtype"
        assert garr.dtype == fresh_st[path][1].dtype
        want = expected_values(arr, settings).astype(garr.dtype)
        np.testing.assert_array_equal(garr, want, err_msg=path)


def _check_wire_dtypes(record, settings) -> None:
    fdt, idt = WIRE_DTYPES[settings]
    for path, leaf in flatten(record).items():
        if isinstance(leaf, ParamRecord):
            kind = leaf.dtype.name
            if path in ("counters.step", "counters.table"):
                assert kind == idt, (path, kind)
            elif path == "counters.mask":
                assert kind == "BOOL", (path, kind)
            else:
                assert kind == fdt, (path, kind)


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.__name__[:4])
@pytest.mark.parametrize("rec_cls", RECORDERS, ids=lambda c: c.__name__)
def test_round_trip_every_recorder_and_precision(rec_cls, settings, original, tmp_path):
    model, st = original
    rec = rec_cls(settings)
    if isinstance(rec, FileRecorder):
        device = NdArray().device()
        fresh = build(device, seed=2)
        assert all(state(fresh)[p][0] != st[p][0] for p in st)  # ids differ before loading
        path = model.save_file(tmp_path / "model", rec)
        assert path.name == "model." + rec.file_extension() and path.exists()
        _check_wire_dtypes(rec.load(path), settings)
        loaded = fresh.load_file(path, rec, device)
    else:
        assert isinstance(rec, BytesRecorder)
        data = rec.record(model.into_record())
        assert isinstance(data, bytes)
        # Embedded model: the bytes alone, a new module on a fresh device of another backend
        # instance (float64), nothing shared with the writer.
        device = NdArray(float_dtype="float64").device()
        fresh = build(device, seed=3)
        record = rec_cls().load(data, device)
        _check_wire_dtypes(record, settings)
        loaded = fresh.load_record(record, device)
        assert loaded.linear.weight.val().numpy().dtype == np.float64
    _check_loaded(loaded, fresh, st, settings)


@pytest.mark.parametrize(
    "rec_cls", [NamedMpkBytesRecorder, BinBytesRecorder], ids=lambda c: c.__name__
)
def test_f64_module_double_exact_full_rounded(rec_cls):
    """A float64 module keeps every bit with Double; Full rounds to float32 and loads as f64."""
    device = NdArray(float_dtype="float64").device()
    model = build(device, seed=4)
    st = state(model)
    for settings, cast in (
        (DoublePrecisionSettings, np.float64),
        (FullPrecisionSettings, np.float32),
        (HalfPrecisionSettings, np.float16),
    ):
        rec = rec_cls(settings)
        loaded = build(device, seed=5).load_record(rec.load(rec.record(model.into_record())))
        for path, (pid, arr, dtype) in state(loaded).items():
            assert pid == st[path][0] and dtype == st[path][2]
            want = st[path][1]
            if want.dtype.kind == "f":
                want = want.astype(cast).astype(np.float64)
            np.testing.assert_array_equal(arr, want, err_msg=f"{settings.__name__} {path}")


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.__name__[:4])
def test_config_init_with_record(original, settings, tmp_path):
    """`Config.init_with(record, device)` (first book) for the configs that have it."""
    model, st = original
    rec = burn_record.NamedMpkGzFileRecorder(settings)
    record = rec.load(model.save_file(tmp_path / "m", rec))
    device = NdArray().device()
    cases = [
        (LinearConfig(4, 3), "linear"),
        (Conv1dConfig(2, 3, 3), "conv1d"),
        (Conv2dConfig([2, 4], [3, 3], groups=2), "conv2d"),
    ]
    for cfg, name in cases:
        layer = cfg.init_with(record[name], device)
        for field, p in layer.named_parameters():
            pid, arr, dtype = st[f"{name}.{field}"]
            assert str(p.id) == pid and p.val().dtype == dtype
            np.testing.assert_array_equal(p.val().numpy(), expected_values(arr, settings))


def test_config_init_with_draws_no_random_init(original):
    """The book's `init_with` builds from the record without a random init first: the device's
    random stream is untouched (a random init would advance it)."""
    model, _ = original
    record = model.into_record()
    device = NdArray().device()
    for cfg, name in (
        (LinearConfig(4, 3), "linear"),
        (Conv1dConfig(2, 3, 3), "conv1d"),
        (Conv2dConfig([2, 4], [3, 3], groups=2), "conv2d"),
    ):
        device.seed(7)
        reference = Tensor.random([4], device=device).numpy()
        device.seed(7)
        cfg.init_with(record[name], device)
        np.testing.assert_array_equal(
            Tensor.random([4], device=device).numpy(),
            reference,
            err_msg=f"{type(cfg).__name__}.init_with drew random values",
        )
