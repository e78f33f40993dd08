"""TensorBoard and MLflow loggers plugged into a real training run (the Mlp of `real_parts` on
Autodiff(NdArray)), read back independently: the TensorBoard event file decoded record by record
(length, masked CRC32C of the length, Event protobuf, masked CRC32C of the data) and the MLflow run
read through `MlflowClient` from a `file:` store; both compared with the FileMetricLogger's logs."""

import struct

import numpy as np
import pytest
from burn_train import Split
from burn_train.logger import FileMetricLogger, MlflowMetricLogger, TensorBoardMetricLogger
from real_parts import builder, fit


def _crc32c(data: bytes) -> int:
    """Bitwise CRC-32C (Castagnoli, reflected polynomial 0x82F63B78)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def _masked(data: bytes) -> int:
    crc = _crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def read_events(path):
    """{tag: [(step, value)]} from a TFRecord event file; every CRC is checked."""
    from tensorboardX.proto.event_pb2 import Event

    blob, pos, out = path.read_bytes(), 0, {}
    while pos < len(blob):
        header = blob[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", blob[pos + 8 : pos + 12])[0] == _masked(header)
        data = blob[pos + 12 : pos + 12 + length]
        assert struct.unpack("<I", blob[pos + 12 + length : pos + 16 + length])[0] == _masked(data)
        pos += 16 + length
        event = Event.FromString(data)
        for v in event.summary.value:
            out.setdefault(v.tag, []).append((event.step, v.simple_value))
    return out


def test_crc32c_check_value():
    assert _crc32c(b"123456789") == 0xE3069283  # RFC 3720's check value


def _file_values(tmp_path, split, name, epochs):
    """Per-item values and count-weighted epoch means from the FileMetricLogger's logs."""
    items, means = [], []
    for e in range(1, epochs + 1):
        rows = [
            [float(x) for x in line.split(",")]
            for line in (tmp_path / f"{split}/epoch-{e}/{name}.log").read_text().split("\n")
            if line
        ]
        v = np.array([r[0] for r in rows], np.float64)
        c = np.array([r[1] if len(r) > 1 else 1 for r in rows], np.float64)
        items += list(v)
        means.append(float((v * c).sum() / c.sum()))
    return items, means


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    # MLflow 3.x refuses the `file:` store unless told: it is in maintenance mode, still supported
    mp = pytest.MonkeyPatch()
    mp.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    tmp = tmp_path_factory.mktemp("run")
    tb = TensorBoardMetricLogger(tmp / "tb")
    ml = MlflowMetricLogger("burn-test", f"file:{tmp / 'mlruns'}", run_name="mlp", params={"lr": 0.02})
    fit(builder(tmp, epochs=2).metric_loggers(FileMetricLogger(tmp), tb, ml))
    yield tmp, ml
    mp.undo()


def test_tensorboard_events_match_file_logs(trained):
    tmp, _ = trained
    files = list((tmp / "tb").glob("events.out.tfevents.*"))
    assert len(files) == 1
    events = read_events(files[0])
    for split, name in (("train", "Loss"), ("train", "Accuracy"), ("valid", "Loss")):
        items, means = _file_values(tmp, split, name, 2)
        got = events[f"{split}/{name}"]
        assert [s for s, _ in got] == list(range(len(items)))  # steps continue across epochs
        np.testing.assert_allclose([v for _, v in got], items, rtol=1e-6)  # float32 in the file
        got = events[f"epoch/{split}/{name}"]
        assert [s for s, _ in got] == [1, 2]
        np.testing.assert_allclose([v for _, v in got], means, rtol=1e-6)
    # tensorboardX writes a space in a tag as `_`
    assert "train/Learning_Rate" in events and "valid/Learning_Rate" not in events


def test_mlflow_run_matches_file_logs(trained):
    from mlflow.tracking import MlflowClient

    tmp, ml = trained
    client = MlflowClient(tracking_uri=f"file:{tmp / 'mlruns'}")
    run = client.get_run(ml.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "mlp"
    assert run.data.params == {"lr": "0.02"}
    for split, name in (("train", "Loss"), ("valid", "Accuracy"), ("train", "Learning Rate")):
        items, means = _file_values(tmp, split, name, 2)
        hist = sorted(client.get_metric_history(ml.run_id, f"{split}/{name}"), key=lambda m: m.step)
        assert [m.step for m in hist] == list(range(len(items)))
        np.testing.assert_allclose([m.value for m in hist], items, rtol=1e-12)
        hist = sorted(
            client.get_metric_history(ml.run_id, f"epoch/{split}/{name}"), key=lambda m: m.step
        )
        assert [m.step for m in hist] == [1, 2]
        np.testing.assert_allclose([m.value for m in hist], means, rtol=1e-12)


def test_non_numeric_entries_are_skipped(tmp_path):
    from burn_train.metric import MetricEntry

    tb = TensorBoardMetricLogger(tmp_path)
    tb.log(MetricEntry("Gpu", "", "N/A"), 1, Split.TRAIN)
    tb.log(MetricEntry("Loss", "", "3.0,1"), 1, Split.TRAIN)
    tb.log(MetricEntry("Loss", "", "1.0,3"), 1, Split.TRAIN)
    tb.end_epoch(1, Split.TRAIN)
    tb.close()
    events = read_events(next(tmp_path.glob("events.out.tfevents.*")))
    assert sorted(events) == ["epoch/train/Loss", "train/Loss"]
    assert events["epoch/train/Loss"] == [(1, 1.5)]  # (3*1 + 1*3) / 4


@pytest.mark.parametrize(
    "module, make, extra",
    [
        ("tensorboardX", "TensorBoardMetricLogger('tb')", "burn-train[tensorboard]"),
        ("mlflow", "MlflowMetricLogger()", "burn-train[mlflow]"),
    ],
)
def test_missing_extra_names_it(tmp_path, module, make, extra):
    """Without the writer package, constructing the logger raises ImportError naming the extra
    (the package hidden in a fresh interpreter: `sys.modules[name] = None` blocks its import)."""
    import subprocess
    import sys

    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from burn_train.logger import MlflowMetricLogger, TensorBoardMetricLogger\n"
        f"try:\n    {make}\nexcept ImportError as e:\n    print('ERR', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("ERR") and extra in out, out
    assert not (tmp_path / "tb").exists() and not (tmp_path / "mlruns").exists()
