"""burn: the facade of burn-py, with Burn's module paths.

`burn.tensor.Tensor`, `burn.nn.conv.Conv2dConfig`, `burn.optim.AdamConfig`,
`burn.data.dataloader.DataLoaderBuilder`, `burn.train.LearnerBuilder`, `burn.record.CompactRecorder`,
`burn.backend.NdArray`, `burn.backend.Autodiff`, ... Each path imports the package that implements
it (`burn_tensor`, `burn_nn`, ...); a missing package raises ImportError naming the pip extra.

Example:
    >>> from burn.tensor import Tensor
    >>> from burn.backend import NdArray
    >>> Tensor.ones([2], NdArray().device()).sum().into_scalar()
    2.0
"""

from . import _alias

_alias.install()

from . import backend  # noqa: E402  (after the alias finder is installed)

_LAZY = (
    "tensor",
    "nn",
    "optim",
    "record",
    "train",
    "config",
    "module",
    "autodiff",
    "lr_scheduler",
    "grad_clipping",
    "import_",
)


#: functions of the facade itself: name -> (module, pip extra)
_FUNCTIONS = {"capture": ("burn_fusion", "fusion"), "CaptureWarning": ("burn_fusion", "fusion")}


def __getattr__(name: str):
    if name in _FUNCTIONS:
        # `burn.capture(train_step)`: step capture lives with Fusion (burn_fusion.capture)
        import importlib
        import importlib.util

        module, extra = _FUNCTIONS[name]
        if importlib.util.find_spec(module) is None:
            raise ImportError(
                f"burn.{name} needs the '{module.replace('_', '-')}' package: "
                f"pip install 'burn-py[{extra}]'",
                name=f"burn.{name}",
            )
        return getattr(importlib.import_module(module), name)
    if name in _LAZY:
        return _alias.load(f"burn.{name}")
    if name in ("data", "prelude"):
        # import_module, not `from . import x`: the latter probes this __getattr__ again.
        import importlib

        return importlib.import_module(f"burn.{name}")
    raise AttributeError(f"module 'burn' has no attribute {name!r}")


__all__ = ["backend", *_LAZY, "data", "prelude", *_FUNCTIONS]
