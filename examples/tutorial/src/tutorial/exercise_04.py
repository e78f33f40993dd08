"""Exercise 4 (Step 4, the Config pattern): `ExperimentConfig` with one required field and three
defaults; set dropout to 0.3 with the builder, save to JSON, load it back, assert equality.

Burn's `#[derive(Config)]` is burn-py's `@config` decorator: fields without a default are the
positional constructor arguments (`ExperimentConfig::new(hidden_size)` is
`ExperimentConfig(hidden_size)`), each field gets a `with_<field>` builder, and `save`/`load`
write and read serde-style JSON. `usize`/`f64`/`String` become `int`/`float`/`str`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from burn_nn import config


@config
class ExperimentConfig:
    """Hyper-parameters of an experiment."""

    hidden_size: int  # required: no default
    dropout: float = 0.5
    activation: str = "relu"
    lr: float = 1e-4


def run(directory: str | Path | None = None) -> tuple[ExperimentConfig, ExperimentConfig, str]:
    """Save `ExperimentConfig(128).with_dropout(0.3)` as `experiment.json` in `directory` (a
    temporary one when None), load it back and check every field; print and return
    `(config, loaded, json_text)`."""
    experiment = ExperimentConfig(128).with_dropout(0.3)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(directory if directory is not None else tmp) / "experiment.json"
        experiment.save(path)
        text = path.read_text()
        loaded = ExperimentConfig.load(path)

    assert loaded == experiment
    assert loaded.hidden_size == 128
    assert loaded.dropout == 0.3
    assert loaded.activation == "relu"
    assert loaded.lr == 1e-4

    print("Saved experiment.json:")
    print(text)
    print(
        f"Loaded: hidden_size={loaded.hidden_size}, dropout={loaded.dropout}, "
        f"activation={loaded.activation!r}, lr={loaded.lr}"
    )
    print("Loaded config matches the saved one.")
    return experiment, loaded, text


if __name__ == "__main__":
    run()
