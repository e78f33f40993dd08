"""burn_optim: optimizers, gradient clipping and accumulation, LR schedulers (Burn's `burn::optim`).

Functional as in Burn: no `zero_grad`, the optimizer returns the updated module.

Example:
    >>> from burn_ndarray import NdArray
    >>> from burn_autodiff import Autodiff
    >>> from burn_tensor import Tensor
    >>> from burn_nn import LinearConfig
    >>> from burn_optim import AdamConfig, GradientsParams
    >>> device = Autodiff(NdArray()).device()
    >>> model = LinearConfig(2, 1).init(device)
    >>> optim = AdamConfig().init()
    >>> loss = model.forward(Tensor.ones([4, 2], device)).sum()
    >>> grads = GradientsParams.from_grads(loss.backward(), model)
    >>> model = optim.step(1e-3, model, grads)
"""

from . import grad_clipping, lr_scheduler
from ._accum import GradientsAccumulator
from ._adagrad import AdaGrad, AdaGradConfig
from ._adam import Adam, AdamConfig
from ._adamw import AdamW, AdamWConfig
from ._clipping import GradientClipping, GradientClippingConfig
from ._decay import MomentumConfig, WeightDecayConfig
from ._grads import GradientsParams
from ._groups import ParamGroup
from ._loss_scale import DynamicLossScaler
from ._mixed_precision import MixedPrecision
from ._muon import Muon, MuonConfig
from ._optimizer import ModuleOptimizer, Optimizer, OptimizerAdaptor, SimpleOptimizer
from ._rmsprop import RmsProp, RmsPropConfig
from ._sgd import Sgd, SgdConfig

LearningRate = float

__all__ = [
    "DynamicLossScaler",
    "MixedPrecision",
    "AdaGrad",
    "AdaGradConfig",
    "Adam",
    "AdamConfig",
    "AdamW",
    "AdamWConfig",
    "GradientClipping",
    "GradientClippingConfig",
    "GradientsAccumulator",
    "GradientsParams",
    "LearningRate",
    "ModuleOptimizer",
    "MomentumConfig",
    "Muon",
    "MuonConfig",
    "Optimizer",
    "OptimizerAdaptor",
    "ParamGroup",
    "RmsProp",
    "RmsPropConfig",
    "Sgd",
    "SgdConfig",
    "SimpleOptimizer",
    "WeightDecayConfig",
    "grad_clipping",
    "lr_scheduler",
]
