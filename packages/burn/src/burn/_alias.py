"""Import aliases: `burn.nn.conv` is `burn_nn.conv`, `burn.data.dataloader` is `burn_dataset.dataloader`.

A meta-path finder maps Burn's module paths onto the packages that implement them, so the facade
needs no per-symbol re-export lists and stays in sync with each package. A path whose package is
not installed raises ImportError naming the pip extra to install.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

# facade prefix -> (implementing module, the pip extra that installs it)
ALIASES: dict[str, tuple[str, str]] = {
    "burn.tensor": ("burn_tensor", "ndarray"),
    "burn.nn": ("burn_nn", "nn"),
    "burn.optim": ("burn_optim", "optim"),
    "burn.lr_scheduler": ("burn_optim.lr_scheduler", "optim"),
    "burn.grad_clipping": ("burn_optim.grad_clipping", "optim"),
    "burn.record": ("burn_record", "record"),
    "burn.data.dataset": ("burn_dataset", "dataset"),
    "burn.data.dataloader": ("burn_dataset.dataloader", "dataset"),
    "burn.train": ("burn_train", "train"),
    "burn.config": ("burn_nn._config", "nn"),  # the module holding @config, Config, ConfigError
    "burn.module": ("burn_nn.module", "nn"),
    "burn.autodiff": ("burn_autodiff", "autodiff"),
    "burn.import_": ("burn_import", "import"),  # `import` is a keyword: burn.import_.pytorch
    "burn.store": ("burn_store", "store"),  # Burn's `burn::store` (feature "store")
}


def target_for(fullname: str) -> tuple[str, str] | None:
    for prefix in sorted(ALIASES, key=len, reverse=True):
        if fullname == prefix or fullname.startswith(prefix + "."):
            module, extra = ALIASES[prefix]
            return module + fullname[len(prefix) :], extra
    return None


def load(fullname: str):
    found = target_for(fullname)
    if found is None:
        raise ImportError(f"no burn facade path {fullname!r}")
    target, extra = found
    top = target.split(".")[0]
    if importlib.util.find_spec(top) is None:
        raise ImportError(
            f"{fullname} needs the '{top.replace('_', '-')}' package: pip install 'burn-py[{extra}]'",
            name=fullname,
        )
    return importlib.import_module(target)


class _Loader(importlib.abc.Loader):
    """Hands out the implementing module itself under the facade name.

    The import system overwrites `__spec__` of whatever `create_module` returns with the facade's
    spec (which is not a package spec); `exec_module` puts the module's own spec back, or the real
    module would stop being a package (breaking `importlib.resources`, pickling, relative imports).
    """

    def __init__(self):
        self._spec = None

    def create_module(self, spec):
        module = load(spec.name)
        self._spec = module.__spec__
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if target_for(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Loader())


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
