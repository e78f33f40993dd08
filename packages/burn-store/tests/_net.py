"""A small burn_nn model with fixed values and ids, shared by the store tests and the script
that wrote `fixtures/net.bpk`."""

import numpy as np
from burn_ndarray import NdArray
from burn_nn import LayerNormConfig, LinearConfig, Module, ParamId
from burn_record import ParamRecord
from burn_tensor import TensorData

DEVICE = NdArray().device()


class Net(Module):
    fc: Module
    norm: Module


def fixed(module, start: float, first_id: int):
    """`module` with parameter k = start + 0.25 * arange reshaped, and id first_id + k."""
    record = module.into_record()
    for k, name in enumerate(record):  # these modules' records are flat: field -> ParamRecord
        shape = tuple(record[name].value.shape)
        values = (start + 0.25 * np.arange(int(np.prod(shape)))).reshape(shape)
        record[name] = ParamRecord(str(ParamId(first_id + k)), TensorData(values.astype(np.float32)))
    return module.load_record(record)


def net() -> Net:
    """fc: Linear(2, 3) (weight [2, 3], bias [3]), norm: LayerNorm(3) (gamma, beta)."""
    fc = fixed(LinearConfig(2, 3).init(DEVICE), 0.5, 1000)
    norm = fixed(LayerNormConfig(3).init(DEVICE), -1.0, 2000)
    return Net(fc=fc, norm=norm)
