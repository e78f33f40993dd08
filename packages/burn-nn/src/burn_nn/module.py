"""`burn_nn.module`: Burn's `burn::module` path (Module, Param, visitors, initializers)."""

from ._flat import params_of, replace_params
from ._initializer import Initializer
from ._module import Module
from ._param import Param, ParamId, RunningState
from ._visitor import ModuleMapper, ModuleVisitor

__all__ = [
    "Initializer",
    "Module",
    "ModuleMapper",
    "ModuleVisitor",
    "Param",
    "ParamId",
    "RunningState",
    "params_of",
    "replace_params",
]
