"""`OptimizerAdaptor`: runs a per-tensor rule over every parameter of a module (Burn's adaptor).

Flow of `step(lr, module, grads)` (Burn's `SimpleOptimizerMapper`, in two passes): visit the
module's float parameters; for each one that requires grad and has a gradient in `grads`: clip the
gradient (if configured) and bring the parameter and its state to the gradient's device. Then the
rule updates all of them in one `step_many` call on the inner (non-autodiff) tensors (Adam: one
kernel launch on CUDA), the new states are stored under their `ParamId`s, and a rebuild puts each
result back, lifted onto the autodiff device as a fresh leaf that requires grad. Parameters without
gradients are untouched; a step that raises changes no state.
"""

from __future__ import annotations

import weakref

from typing import Any

from burn_nn import Param, ParamId
from burn_tensor import Tensor

from ._clipping import GradientClipping
from ._grads import GradientsParams, _params
from ._groups import ParamGroup, assign, check_groups, rule_for
from ._ranges import learning_rate
from ._state import state_to_record
from ._step_params import _Pick, _with_params


class SimpleOptimizer:
    """A per-tensor update rule: `step(lr, tensor, grad, state) -> (tensor, state)`.

    `tensor` and `grad` live on the inner backend; `state` is this rule's nested dict for one
    parameter (None on its first step). Subclass it to write a new optimizer, then wrap it in
    `OptimizerAdaptor(rule)` to train modules with it.

    Example:
        >>> class PlainSgd(SimpleOptimizer):
        ...     def step(self, lr, tensor, grad, state):
        ...         return tensor - grad * lr, None
        >>> optim = OptimizerAdaptor(PlainSgd())
    """

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any) -> tuple[Tensor, Any]:
        raise NotImplementedError

    def step_many(
        self, lr: float, tensors: list[Tensor], grads: list[Tensor], states: list[Any]
    ) -> tuple[list[Tensor], list[Any]]:
        """Every parameter of one optimizer step at once -> `(tensors, states)` lists.

        The adaptor calls this once per step with the parameters that have gradients, in module
        order. This default runs `step` on each; a rule overrides it to batch the update (Adam:
        one `adam_update_many` per dtype/device/step count, one kernel launch on CUDA). An
        exception from parameter `i` carries `i` as its `burn_param_index` attribute, so the
        adaptor can name the parameter.
        """
        news, out = [], []
        for i, (tensor, grad, state) in enumerate(zip(tensors, grads, states, strict=True)):
            try:
                new, st = self.step(lr, tensor, grad, state)
            except Exception as e:
                e.burn_param_index = i
                raise
            news.append(new)
            out.append(st)
        return news, out

    def __repr__(self) -> str:
        fields = (
            ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
            if hasattr(self, "__dict__")
            else ""
        )
        return f"{type(self).__name__}({fields})"


class Optimizer:
    """What training loops need from an optimizer: `step`, `to_record`, `load_record`."""

    def step(self, lr: float, module: Any, grads: GradientsParams) -> Any:
        raise NotImplementedError

    def to_record(self) -> Any:
        raise NotImplementedError

    def load_record(self, record: Any) -> Optimizer:
        raise NotImplementedError


class OptimizerAdaptor(Optimizer):
    """A module optimizer built from a `SimpleOptimizer` rule; what every `XConfig.init()` returns.

    Its state is a dict `ParamId -> state`, saved by `to_record()` as `{id_string: nested dict of
    TensorData/ints}` (writable with any `burn_record` recorder) and restored by
    `load_record(record)`, so a run can stop and resume bit-for-bit.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_autodiff import Autodiff
        >>> from burn_nn import LinearConfig
        >>> from burn_optim import AdamConfig, GradientsParams
        >>> device = Autodiff(NdArray()).device()
        >>> model = LinearConfig(2, 1).init(device)
        >>> optim = AdamConfig().init()
        >>> loss = model.forward(Tensor.ones([4, 2], device)).sum()
        >>> grads = GradientsParams.from_grads(loss.backward(), model)
        >>> new = optim.step(1e-2, model, grads)
        >>> new.weight.id == model.weight.id, len(optim.to_record())
        (True, 2)
    """

    def __init__(self, optim: SimpleOptimizer, grad_clipping: GradientClipping | None = None):
        self._optim = optim
        self._records: dict[ParamId, Any] = {}
        # Each updated parameter's input tensor of the last step (weakly: no parameter is kept
        # alive by it): a later step given that same tensor again means the module the step
        # returned was dropped (`optim.step(lr, model, grads)` without `model = ...`).
        self._stepped: dict[ParamId, weakref.ref] = {}
        self._grad_clipping = grad_clipping.init() if grad_clipping is not None else None
        self._groups: list[ParamGroup] = []

    # -- Burn's accessors --------------------------------------------------------------------------
    def optim(self) -> SimpleOptimizer:
        return self._optim

    def has_gradient_clipping(self) -> bool:
        return self._grad_clipping is not None

    def grad_clipping(self) -> GradientClipping | None:
        return self._grad_clipping

    def with_groups(self, groups: list[ParamGroup] | None) -> OptimizerAdaptor:
        """Train the parameters of each `ParamGroup` with its own lr / weight decay; the others
        keep the optimizer's. None or [] removes the groups. Returns self.

        Example:
            >>> from burn_optim import AdamWConfig, ParamGroup
            >>> optim = AdamWConfig().init().with_groups([ParamGroup("*.bias", weight_decay=0.0)])
            >>> len(optim.groups())
            1
        """
        self._groups = check_groups(groups or [], self._optim)
        return self

    def groups(self) -> list[ParamGroup]:
        """The parameter groups (see `with_groups`)."""
        return list(self._groups)

    def with_grad_clipping(self, clipping: GradientClipping | None) -> OptimizerAdaptor:
        """Clip every gradient before the update (`GradientClipping` or its config)."""
        self._grad_clipping = clipping.init() if clipping is not None else None
        return self

    # -- stepping ----------------------------------------------------------------------------------
    def step(self, lr: float, module: Any, grads: GradientsParams) -> Any:
        """The module after one update with learning rate `lr`; `grads` is consumed.

        Args:
            lr: learning rate (a float; call your scheduler's `step()` to get it).
            module: a `burn_nn.Module` (usually on an autodiff device).
            grads: `GradientsParams.from_grads(loss.backward(), module)`.

        Returns:
            A new module whose updated Params keep their `ParamId`s and require grad again.
        """
        if not isinstance(grads, GradientsParams):
            raise TypeError(
                f"step() takes GradientsParams, got {type(grads).__name__}; "
                "use GradientsParams.from_grads(loss.backward(), module)"
            )
        lr = learning_rate("step", lr)
        given = len(grads)
        pick = _Pick(self, grads)
        pick.gather(_params(module))
        if not pick.params:
            if given and not pick.matched:
                raise ValueError(
                    f"optim.step: none of the {given} gradients belongs to a parameter of the "
                    "module given, so nothing would be updated; were they computed for another "
                    "model (GradientsParams.from_grads(loss.backward(), model) with the model "
                    "whose forward gave the loss)?"
                )
            return module
        try:
            news, states = self._step_groups(lr, module, pick)
        except Exception as e:
            i = getattr(e, "burn_param_index", None)
            if i is not None and pick.states[i] is None:
                e.add_note(
                    f"while updating parameter {pick.params[i].id} of shape "
                    f"{pick.inners[i].dims()} (first step)"
                )
            elif i is not None:
                param = pick.params[i]
                e.add_note(
                    f"while updating parameter {param.id} of shape {pick.inners[i].dims()} "
                    f"with its optimizer state (shapes {_state_shapes(pick.states[i])}); was "
                    "the record loaded by load_record() saved for another model?"
                )
            raise
        # Only now, with every update computed, the state changes: a step that raises leaves
        # the optimizer as it was.
        records = self._records
        stepped = self._stepped
        new_params = {}
        lift: dict = {}  # (param's device, gradient's device) -> the device to lift onto, or
        # False when the param's device is not an autodiff one (the result stays as it is)
        ref = weakref.ref
        for param, tensor, device, new, state in zip(
            pick.params, pick.tensors, pick.devices, news, states, strict=True
        ):
            pid = param.id
            if state is not None:
                records[pid] = state
            else:
                records.pop(pid, None)
            stepped[pid] = ref(tensor)
            tensor_device = tensor.device
            to = lift.get((tensor_device, device), lift)
            if to is lift:
                to = False
                if tensor_device.backend.is_autodiff:
                    to = tensor_device if tensor_device.inner() == device else None
                lift[(tensor_device, device)] = to
            if to is not False:
                new = Tensor.from_inner(new, to)
            if type(param) is Param:
                new_params[pid] = Param.updated(pid, new, param.require_grad)
            else:  # a subclass keeps its own constructor
                new_params[pid] = type(param)(pid, new, param.require_grad)
        return _with_params(module, new_params)

    def _step_groups(self, lr: float, module: Any, pick: _Pick) -> tuple[list, list]:
        """One `step_many` per group (the optimizer's own settings for parameters in none), the
        results back in module order; an error carries its index in the whole step."""
        if not self._groups:
            return self._optim.step_many(lr, pick.inners, pick.grad_list, pick.states)
        owner = assign(self._groups, module)
        parts: dict[int | None, list[int]] = {}
        for i, param in enumerate(pick.params):
            parts.setdefault(owner.get(param.id), []).append(i)
        news: list = [None] * len(pick.params)
        states: list = [None] * len(pick.params)
        for g, idx in parts.items():
            rule, glr = self._optim, lr
            if g is not None:
                rule, glr = rule_for(rule, self._groups[g]), self._groups[g].group_lr(lr)
            try:
                out, st = rule.step_many(
                    glr,
                    [pick.inners[i] for i in idx],
                    [pick.grad_list[i] for i in idx],
                    [pick.states[i] for i in idx],
                )
            except Exception as e:
                j = getattr(e, "burn_param_index", None)
                if j is not None:
                    e.burn_param_index = idx[j]
                raise
            for k, i in enumerate(idx):
                news[i], states[i] = out[k], st[k]
        return news, states

    # -- records -----------------------------------------------------------------------------------
    def to_record(self) -> dict[str, Any]:
        """`{param_id_string: state}` with tensors as `TensorData` (host copies)."""
        return {str(pid): state_to_record(state) for pid, state in self._records.items()}

    def load_record(self, record: dict[str, Any] | None) -> OptimizerAdaptor:
        """Replace the whole state with `record` (from `to_record`, possibly via a recorder).

        Tensors are rebuilt lazily at the next step on each parameter's device and dtype.
        Returns self (Burn's `load_record` returns the optimizer).
        """
        if record is None:
            record = {}
        if not isinstance(record, dict):
            raise TypeError(
                f"load_record: expected a dict keyed by ParamId, got {type(record).__name__}"
            )
        self._records = {
            ParamId.from_str(k) if not isinstance(k, ParamId) else k: v for k, v in record.items()
        }
        return self

    # -- step capture (burn_fusion.capture) --------------------------------------------------------
    def capture_state(self) -> dict:
        """The live state, `{ParamId: state}` (tensors and step counts), for step capture: a
        captured step carries it from call to call (`capture_restore` puts it back)."""
        return dict(self._records)

    def capture_restore(self, state: dict) -> None:
        """Replace the live state by `state` (from `capture_state`, tensors and counts rebound
        by a captured step's replay)."""
        self._records = dict(state)

    def __len__(self) -> int:
        """Number of parameters with optimizer state."""
        return len(self._records)

    def __repr__(self) -> str:
        clip = f", grad_clipping={self._grad_clipping!r}" if self._grad_clipping else ""
        return f"OptimizerAdaptor({self._optim!r}{clip}, {len(self._records)} state(s))"


def _state_shapes(state: Any) -> list[list[int]]:
    """The shapes of the tensors in one parameter's state tree (for error messages)."""
    if isinstance(state, Tensor):
        return [state.dims()]
    if isinstance(state, dict):
        state = list(state.values())
    if isinstance(state, list | tuple):
        return [shape for v in state for shape in _state_shapes(v)]
    return []


ModuleOptimizer = OptimizerAdaptor
