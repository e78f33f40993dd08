"""burn_store: Burn 0.20's weight store (`burn-store`).

Burnpack files (`.bpk`, Burn's native format, byte for byte), module snapshots with
`PathFilter`, `KeyRemapper` and PyTorch <-> Burn adapters, and stores for safetensors and
PyTorch files over burn_import's readers.

Example:
    >>> import tempfile
    >>> from burn_ndarray import NdArray
    >>> from burn_nn import LinearConfig
    >>> from burn_store import BurnpackStore, save_into, load_from
    >>> model = LinearConfig(4, 2).init(NdArray().device())
    >>> path = tempfile.mkdtemp() + "/model"
    >>> save_into(model, BurnpackStore.from_file(path))          # writes model.bpk
    >>> fresh = LinearConfig(4, 2).init(NdArray().device())
    >>> result = load_from(fresh, BurnpackStore.from_file(path))
    >>> result.applied, result.missing
    (['weight', 'bias'], [])
"""

from ._adapter import BurnToPyTorchAdapter, IdentityAdapter, ModuleAdapter, PyTorchToBurnAdapter
from ._apply import ApplyError, ApplyResult, apply, collect
from ._burnpack import (
    ALIGNMENT,
    MAGIC,
    VERSION,
    BurnpackError,
    BurnpackReader,
    Entry,
    TensorDescriptor,
    write_burnpack,
    write_burnpack_file,
)
from ._filter import KeyRemapper, PathFilter
from ._snapshot import TensorSnapshot
from ._stores import (
    BurnpackStore,
    PytorchStore,
    SafetensorsStore,
    StoreError,
    load_from,
    save_into,
)

__all__ = [
    "ALIGNMENT",
    "MAGIC",
    "VERSION",
    "ApplyError",
    "ApplyResult",
    "BurnToPyTorchAdapter",
    "BurnpackError",
    "BurnpackReader",
    "BurnpackStore",
    "Entry",
    "IdentityAdapter",
    "KeyRemapper",
    "ModuleAdapter",
    "PathFilter",
    "PyTorchToBurnAdapter",
    "PytorchStore",
    "SafetensorsStore",
    "StoreError",
    "TensorDescriptor",
    "TensorSnapshot",
    "apply",
    "collect",
    "load_from",
    "save_into",
]
