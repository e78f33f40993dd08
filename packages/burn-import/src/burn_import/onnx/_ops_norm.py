"""Normalization ops: BatchNormalization, Instance/Layer/GroupNormalization, LRN,
LpNormalization, MeanVarianceNormalization."""

from __future__ import annotations

import numpy as np

from ._context import lit
from ._registry import op


@op("BatchNormalization", attrs=("epsilon", "momentum", "training_mode"))
def batch_norm(ctx):
    eps = ctx.attr("epsilon", 1e-5)
    if ctx.attr("training_mode", 0):
        mom = ctx.attr("momentum", 0.9)
        xs = ", ".join(ctx.x(i) for i in range(5))
        outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(3))
        ctx.emit(f"{outs} = ops.batch_norm_training({xs}, {eps!r}, {mom!r})")
        return
    if ctx.n_out > 1:
        ctx.fail("running statistics outputs need training_mode=1")
    consts = [ctx.const(i) for i in range(1, 5)]
    if all(c is not None for c in consts) and ctx.elem(0) == 1 and ctx.rank(0) >= 2:
        scale, bias, mean, var = consts
        n = scale.shape[0]
        mom = lit(1 - ctx.attr("momentum", 0.9))
        init = f"BatchNormConfig({n}, epsilon={eps!r}, momentum={mom}).init(device)"
        rec = {"gamma": scale, "beta": bias, "running_mean": mean, "running_var": var}
        name = ctx.add_field("batchnorm", "BatchNorm", init, rec)
        ctx.set(0, f"self.{name}.forward({ctx.x(0)})")
        return
    xs = ", ".join(ctx.x(i) for i in range(5))
    ctx.set(0, f"ops.batch_norm({xs}, {eps!r})")


@op("InstanceNormalization", attrs=("epsilon",))
def instance_norm(ctx):
    eps = ctx.attr("epsilon", 1e-5)
    ctx.set(0, f"ops.instance_norm({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {eps!r})")


@op("LayerNormalization", attrs=("axis", "epsilon", "stash_type"))
def layer_norm(ctx):
    if ctx.n_out > 1 and any(ctx.has_out(i) for i in (1, 2)):
        mean, inv = (ctx.out(i) if ctx.has_out(i) else "_" for i in (1, 2))
        target = f"{ctx.out(0)}, {mean}, {inv}"
    else:
        target = f"{ctx.out(0)}, _, _"
    axis = ctx.axis("axis", -1, ctx.rank(0))
    eps = ctx.attr("epsilon", 1e-5)
    scale, beta = ctx.const(1), (ctx.const(2) if ctx.has(2) else None)
    module = (
        target.endswith(", _, _")
        and axis == ctx.rank(0) - 1
        and ctx.elem(0) == 1
        and scale is not None
        and scale.ndim == 1
        and (not ctx.has(2) or (beta is not None and beta.shape == scale.shape))
    )
    if module:
        # The layer a person would write: burn_nn's LayerNorm over the last dim.
        init = f"LayerNormConfig({scale.shape[0]}, epsilon={eps!r}, bias={beta is not None}).init(device)"
        name = ctx.add_field("layernorm", "LayerNorm", init, {"gamma": scale, "beta": beta})
        ctx.set(0, f"self.{name}.forward({ctx.x(0)})")
        return
    bias = ctx.x(2) if ctx.has(2) else "None"
    ctx.emit(f"{target} = ops.layer_norm({ctx.x(0)}, {ctx.x(1)}, {bias}, {axis}, {eps!r})")


@op("GroupNormalization", attrs=("epsilon", "num_groups", "stash_type"))
def group_norm(ctx):
    eps = ctx.attr("epsilon", 1e-5)
    g = ctx.attr("num_groups")
    scale, bias = ctx.const(1), ctx.const(2)
    c = ctx.shape(0)[1] if ctx.rank(0) >= 2 else None
    if scale is not None and bias is not None and ctx.elem(0) == 1 and c and g and c % g == 0:
        if scale.size == g != c:  # opset 18's per-group scale and bias: one value per channel
            scale, bias = (np.repeat(v.reshape(-1), c // g) for v in (scale, bias))
        if scale.size == c and bias.size == c:
            init = f"GroupNormConfig({g}, {c}, epsilon={eps!r}).init(device)"
            rec = {"gamma": scale.reshape(c), "beta": bias.reshape(c)}
            name = ctx.add_field("groupnorm", "GroupNorm", init, rec)
            ctx.set(0, f"self.{name}.forward({ctx.x(0)})")
            return
    ctx.set(0, f"ops.group_norm({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {g}, {eps!r})")


@op("LRN", attrs=("alpha", "beta", "bias", "size"))
def lrn(ctx):
    a, b, k = ctx.attr("alpha", 1e-4), ctx.attr("beta", 0.75), ctx.attr("bias", 1.0)
    size = ctx.attr("size")
    if size < 1:
        ctx.fail(f"attribute 'size' = {size} must be >= 1")
    ctx.set(0, f"ops.lrn({ctx.x(0)}, {size}, {a!r}, {b!r}, {k!r})")


@op("LpNormalization", attrs=("axis", "p"))
def lp_norm(ctx):
    axis = ctx.axis("axis", -1, ctx.rank(0))
    ctx.set(0, f"ops.lp_normalize({ctx.x(0)}, {axis}, {ctx.attr('p', 2)})")


@op("MeanVarianceNormalization", attrs=("axes",))
def mvn(ctx):
    axes, rank = ctx.ints("axes", [0, 2, 3]), ctx.rank(0)
    if any(not -rank <= a < rank for a in axes):
        ctx.fail(f"attribute 'axes' = {axes}: every axis must be in [{-rank}, {rank - 1}]")
    ctx.set(0, f"ops.mean_variance_norm({ctx.x(0)}, {axes})")
