"""The autodiff rule of `burn_tensor.collective.all_reduce`: the backward of an all-reduce is
the all-reduce (same op) of the output gradients, through the same communicator."""

from __future__ import annotations

from burn_tensor.collective import register_autodiff_all_reduce

from ._custom import custom_op

ALL_REDUCE = custom_op(
    "all_reduce",
    forward=lambda x, comm, op: comm.all_reduce(x, op),
    backward=lambda ctx, g: (ctx.options["comm"].all_reduce(g, ctx.options["op"]),),
)

register_autodiff_all_reduce(lambda tensor, comm, op: ALL_REDUCE(tensor, comm=comm, op=op))
