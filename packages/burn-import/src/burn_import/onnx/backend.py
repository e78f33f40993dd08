"""`burn_import.onnx.backend`: ONNX's backend API (`onnx.backend.base.Backend`) on burn-py.

`prepare(model)` generates the module source with the importer, imports it and loads the
weights; `rep.run(inputs)` calls its `forward` on the chosen burn device and returns numpy
arrays. Every unsupported op or attribute raises `OnnxImportError` in `prepare`.

Example:
    >>> import numpy as np, onnx
    >>> from onnx import helper, TensorProto
    >>> from burn_import.onnx import backend
    >>> node = helper.make_node("Relu", ["x"], ["y"])
    >>> g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    ...                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    >>> m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    >>> backend.run_model(m, [np.array([-1.0, 2.0], np.float32)])[0]
    array([0., 2.], dtype=float32)

Choose the burn device with `BurnBackend.with_device(OpenCl().device())` (a Backend class bound
to that device) or `set_device(...)`; the default is `burn_tensor.default_device()`.
"""

from __future__ import annotations

import numpy as np
from onnx.backend.base import Backend, BackendRep

from ._codegen import generate
from ._errors import OnnxImportError
from ._load import load_model
from ._modelgen import _dtype_of, build_module, exec_source
from ._types import DTYPES, np_dtype, type_name

_DEVICE = None


def set_device(device) -> None:
    """The burn device `prepare` uses when the Backend class has none of its own."""
    global _DEVICE
    _DEVICE = device


def _exec_source(source: str, class_name: str):
    """The generated module's class (the source passed `_verify`; no model text is code)."""
    return exec_source(source, class_name)


class DeviceDtypeError(OnnxImportError):
    """The chosen device cannot hold an element type the model uses (e.g. f16 without fp16)."""


def _check_device_dtypes(gen, device) -> None:
    from burn_tensor import DType, Tensor

    elems = {vt.elem for vt in gen.types.values() if vt is not None and vt.elem in DTYPES}
    for elem in sorted(elems):
        dtype = getattr(DType, DTYPES[elem][0])
        try:
            Tensor.zeros([1], device, dtype=dtype)
        except (TypeError, ValueError) as err:
            raise DeviceDtypeError(
                f"the device cannot hold {type_name(elem)} tensors: {err}"
            ) from None


class BurnBackendRep(BackendRep):
    """A prepared model: the generated module with its weights, on one burn device."""

    def __init__(self, module, gen, device):
        self.module, self.gen, self.device = module, gen, device

    def run(self, inputs, **kwargs):
        from burn_tensor import Tensor

        if isinstance(inputs, dict):
            inputs = [inputs[name] for name, _ in self.gen.inputs]
        elif not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        if len(inputs) != len(self.gen.inputs):
            raise ValueError(f"expected {len(self.gen.inputs)} inputs, got {len(inputs)}")
        args = []
        for arr, (name, vt) in zip(inputs, self.gen.inputs):
            want = np_dtype(vt.elem)
            arr = np.asarray(arr)
            if arr.dtype != want:
                raise TypeError(f"input {name!r}: expected {want}, got {arr.dtype}")
            data = arr.reshape(arr.shape or (1,))
            if data.dtype.kind == "u" and data.dtype.itemsize > 1:  # held in a wider signed type
                data = data.astype(np.int32 if data.dtype.itemsize == 2 else np.int64)
            args.append(Tensor.from_data(np.ascontiguousarray(data), self.device, _dtype_of(arr)))
        out = self.module.forward(*args)
        outs = out if isinstance(out, tuple) else (out,)
        result = []
        for t, (name, vt) in zip(outs, self.gen.outputs):
            arr = np.asarray(t.numpy())
            if vt is not None and vt.rank == 0:
                arr = arr.reshape(())
            if vt is not None and arr.dtype != np_dtype(vt.elem):
                arr = arr.astype(np_dtype(vt.elem))
            result.append(arr)
        return tuple(result)


class BurnBackend(Backend):
    """ONNX backend that imports the model as burn-py code and runs it on a burn device."""

    burn_device = None

    @classmethod
    def with_device(cls, device) -> type:
        return type(f"BurnBackend_{device}", (cls,), {"burn_device": device})

    @classmethod
    def _device(cls):
        if cls.burn_device is not None:
            return cls.burn_device
        if _DEVICE is not None:
            return _DEVICE
        from burn_tensor import default_device

        return default_device()

    @classmethod
    def is_compatible(cls, model, device="CPU", **kwargs) -> bool:
        return True

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs) -> BurnBackendRep:
        model = load_model(model)
        gen = generate(model, "Model", (model.graph.name or "model") + ".onnx", None)
        klass = _exec_source(gen.source, gen.class_name)
        dev = cls._device()
        _check_device_dtypes(gen, dev)
        return BurnBackendRep(build_module(gen, klass, dev), gen, dev)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        raise NotImplementedError("run_node: use run_model with a one-node graph")

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


prepare = BurnBackend.prepare
run_model = BurnBackend.run_model
run_node = BurnBackend.run_node
supports_device = BurnBackend.supports_device
is_compatible = BurnBackend.is_compatible
