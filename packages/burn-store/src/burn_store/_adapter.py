"""Module adapters (Burn's `burn_store::adapter`): PyTorch <-> Burn layout conversions.

PyTorch stores a Linear weight as `[out, in]`, Burn as `[in, out]`; PyTorch names the norm
parameters `weight`/`bias`, Burn `gamma`/`beta`. An adapter rewrites a snapshot knowing which
module type holds it; `alternative_param_name` lets a load find `norm.weight` for `norm.gamma`.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import TensorData

from ._snapshot import TensorSnapshot

LINEAR = "Linear"
# Burn 0.20 adapts the first three; InstanceNorm and RmsNorm name theirs the same way in PyTorch
NORMS = ("BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "RmsNorm")
_TO_BURN = {"weight": "gamma", "bias": "beta"}
_TO_TORCH = {"gamma": "weight", "beta": "bias"}


class ModuleAdapter:
    """Rewrites snapshots (Burn's `ModuleAdapter`); the identity unless overridden."""

    def adapt(self, snapshot: TensorSnapshot) -> TensorSnapshot:
        return snapshot

    def get_alternative_param_name(self, param_name: str, container_type: str) -> str | None:
        """Another name under which the file may hold this parameter (None: none)."""
        return None


class IdentityAdapter(ModuleAdapter):
    """Leaves every snapshot as it is."""


def _transposed(snapshot: TensorSnapshot) -> TensorSnapshot:
    load = snapshot.load

    def transpose() -> TensorData:
        return TensorData(np.ascontiguousarray(load().numpy().T))

    return TensorSnapshot(
        snapshot.path, snapshot.shape[::-1], snapshot.dtype, transpose, snapshot.param_id,
        snapshot.container_stack,
    )  # fmt: skip


def _adapt(snapshot: TensorSnapshot, names: dict[str, str]) -> TensorSnapshot:
    module = snapshot.module_type()
    *parents, param = snapshot.path_stack
    if module == LINEAR and param == "weight" and len(snapshot.shape) == 2:
        return _transposed(snapshot)
    if module in NORMS and param in names:
        return snapshot.renamed(".".join([*parents, names[param]]))
    return snapshot


class PyTorchToBurnAdapter(ModuleAdapter):
    """PyTorch layout to Burn's: Linear weights transposed, norm weight/bias -> gamma/beta.

    Example:
        >>> s = TensorSnapshot("fc.weight", (3, 2), None, lambda: TensorData([[1, 2]] * 3),
        ...                    container_stack=("Net", "Linear"))
        >>> a = PyTorchToBurnAdapter().adapt(s); a.shape, a.to_data().shape
        ((2, 3), Shape([2, 3]))
    """

    def adapt(self, snapshot: TensorSnapshot) -> TensorSnapshot:
        return _adapt(snapshot, _TO_BURN)

    def get_alternative_param_name(self, param_name: str, container_type: str) -> str | None:
        return _TO_TORCH.get(param_name) if container_type in NORMS else None


class BurnToPyTorchAdapter(ModuleAdapter):
    """Burn layout to PyTorch's: Linear weights transposed, norm gamma/beta -> weight/bias."""

    def adapt(self, snapshot: TensorSnapshot) -> TensorSnapshot:
        return _adapt(snapshot, _TO_TORCH)

    def get_alternative_param_name(self, param_name: str, container_type: str) -> str | None:
        return _TO_BURN.get(param_name) if container_type in NORMS else None
