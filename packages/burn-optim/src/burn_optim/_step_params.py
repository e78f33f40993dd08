"""The two passes around an optimizer rule (`_optimizer.OptimizerAdaptor.step`): `_Pick`
gathers each parameter that steps (its value, gradient and state on the gradient's device) and
`_with_params` puts the new parameters back into the module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn_nn import Module, Param
from burn_nn.module import replace_params
from burn_tensor import Float, Tensor

from ._grads import GradientsParams
from ._state import state_to_device

if TYPE_CHECKING:
    from ._optimizer import OptimizerAdaptor


class _Pick:
    """What gathers one step's work: each float parameter that requires grad and has
    a gradient (consumed from `grads`), with its inner tensor on the gradient's device (Burn moves
    the parameter to where its gradient is), the clipped gradient and its state there."""

    def __init__(self, adaptor: OptimizerAdaptor, grads: GradientsParams):
        self.adaptor, self.grads = adaptor, grads
        self.params: list[Param] = []
        self.tensors: list[Tensor] = []  # each param's value (its device says where it lives)
        self.devices: list = []
        self.inners: list[Tensor] = []
        self.grad_list: list[Tensor] = []
        self.states: list[Any] = []
        self.matched = 0  # gradients that found their parameter (frozen ones included)

    def gather(self, params: list[Param]) -> None:
        """Take each float parameter of `params` (the module's, in `visit`'s order) that has a
        gradient; one loop with its lookups bound once (it runs for every parameter of every
        step)."""
        adaptor = self.adaptor
        pop = self.grads._grads.pop
        stepped = adaptor._stepped.get
        records = adaptor._records.get
        clipping = adaptor._grad_clipping
        out_params, tensors, devices = self.params, self.tensors, self.devices
        inners, grad_list, states = self.inners, self.grad_list, self.states
        for param in params:
            tensor = param.val()
            if tensor.kind is not Float:
                continue
            pid = param.id
            grad = pop(pid, None)
            # no_grad() params (and running states) are frozen even if a gradient was registered.
            if grad is None:
                continue
            self.matched += 1
            if not param.require_grad:
                continue
            ref = stepped(pid)
            if ref is not None and ref() is tensor:
                raise ValueError(
                    f"optim.step: parameter {pid} of shape {tensor.dims()} is the same tensor "
                    "the previous step already updated: the module that step returned was "
                    "dropped. Modules are values: write `model = optim.step(lr, model, grads)`"
                )
            inner = tensor.inner()
            device = grad.device
            if inner.device != device:
                inner = inner.to_device(device)
            if clipping is not None:
                grad = clipping.clip_gradient(grad)
            state = records(pid)
            if state is not None:
                state = state_to_device(state, device, inner.dtype)
            out_params.append(param)
            tensors.append(tensor)
            devices.append(device)
            inners.append(inner)
            grad_list.append(grad)
            states.append(state)


class _Replace:
    """The ModuleMapper that puts the step's new Params in place (by id, so a parameter that
    appears twice in the tree gets the same update everywhere)."""

    def __init__(self, new_params: dict):
        self.new_params = new_params

    def map_float(self, param: Param) -> Param:
        return self.new_params.get(param.id, param)

    def map_int(self, param: Param) -> Param:
        return param

    def map_bool(self, param: Param) -> Param:
        return param


def _with_params(module: Any, new_params: dict) -> Any:
    """The module with each Param whose id is in `new_params` replaced (`replace_params` for a
    `Module` that keeps `Module.map`, else through the module's own `map`)."""
    if isinstance(module, Module) and type(module).map is Module.map:
        get = new_params.get
        return replace_params(module, lambda p: get(p.id, p))
    return module.map(_Replace(new_params))
