"""`burn.data`: `burn.data.dataset` (burn_dataset) and `burn.data.dataloader`."""

from .. import _alias


def __getattr__(name: str):
    if name in ("dataset", "dataloader"):
        return _alias.load(f"burn.data.{name}")
    raise AttributeError(f"module 'burn.data' has no attribute {name!r}")
