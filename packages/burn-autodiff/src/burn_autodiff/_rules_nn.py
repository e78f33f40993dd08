"""Gradient rules of activations and module ops (linear, conv, pools, interpolate, embedding).

They call the backward primitives of the op table on the inner backend (`relu_backward`,
`conv2d_x_backward`, `max_pool2d_with_indices_backward`, ...), so a backend with fast kernels for
those gets a fast backward pass for free. 1-D variants, `max_pool2d`, `conv1d`, `unfold4d`,
`leaky_relu`, `prelu` and `hard_sigmoid` have no rule: their base-class defaults are built from
the ops below and are differentiated through their parts.
"""

from __future__ import annotations

from ._rule import RULES, dtype_of, rule

# -- activations ---------------------------------------------------------------------------------------
RULES["relu"] = rule(lambda c, g: (c.b.relu_backward(c.output(), g),), out=True, memory_bound=True)
RULES["gelu"] = rule(lambda c, g: (c.b.gelu_backward(c.x(0), g),), keep=(0,), memory_bound=True)
RULES["sigmoid"] = rule(
    lambda c, g: (c.b.sigmoid_backward(c.output(), g),), out=True, memory_bound=True
)
RULES["log_sigmoid"] = rule(
    lambda c, g: (c.b.log_sigmoid_backward(c.x(0), g),), keep=(0,), memory_bound=True
)

# softmax family: the backward ops read the output (y) and the dim; no input is kept.
RULES["softmax"] = rule(
    lambda c, g: (c.b.softmax_backward(c.output(), g, c.arg(1)), None), out=True, memory_bound=True
)
RULES["log_softmax"] = rule(
    lambda c, g: (c.b.log_softmax_backward(c.output(), g, c.arg(1)), None),
    out=True,
    memory_bound=True,
)


# dropout: the gradient is the output's times the same scaled mask (the op's second output, the
# only one the node keeps: `out=(1,)`); never recomputed (not memory_bound: a recompute would
# draw another mask)
RULES["dropout"] = rule(lambda c, g: (c.b.float_mul(g, c.outputs()[1]), None), out=(1,))


# -- linear ---------------------------------------------------------------------------------------------
def _linear(c, g):
    # `c.parents[i] is not None` is `c.need(i)` without its call: this rule runs for every
    # linear of a model (issue 35: the transformer step's backward is host bound)
    b, need = c.b, c.parents
    gx = b.linear_x_backward(c.x(1), g) if need[0] is not None else None
    if need[1] is not None and need[2] is not None:
        # one op for both: a backend may fold the bias sums into the weight GEMM (Cuda)
        gw, gb = b.linear_weight_bias_backward(c.x(0), g)
        return gx, gw, gb
    gw = b.linear_weight_backward(c.x(0), g) if need[1] is not None else None
    gb = b.linear_bias_backward(g) if need[2] is not None else None
    return gx, gw, gb


RULES["linear"] = rule(_linear, keep=(0, 1))


def _linear_half(c, g):
    # autocast's linear: the node keeps the op's half copies of x and weight (outputs 1, 2),
    # never the wide inputs; each gradient comes back in its input's dtype
    need, a = c.parents, c.args
    dts = tuple(None if need[i] is None else dtype_of(a[i]) for i in range(3))
    _, xh, wh = c.outputs()
    return c.b.linear_half_backward(xh, wh, g, dts) + (None,)


RULES["linear_half"] = rule(_linear_half, out=(1, 2))


# -- convolutions ----------------------------------------------------------------------------------------
def _conv2d(c, g):
    b, opts = c.b, c.arg(3)
    x, w = c.x(0), c.x(1)
    gx = b.conv2d_x_backward(x, w, g, opts) if c.need(0) else None
    gw = b.conv2d_weight_backward(x, w, g, opts) if c.need(1) else None
    gb = b.conv2d_bias_backward(x, w, c.arg(2), g) if c.need(2) else None
    return gx, gw, gb, None


def _conv_transpose2d(c, g):
    b, opts = c.b, c.arg(3)
    x, w = c.x(0), c.x(1)
    gx = b.conv_transpose2d_x_backward(w, g, opts) if c.need(0) else None
    gw = b.conv_transpose2d_weight_backward(x, w, g, opts) if c.need(1) else None
    gb = b.conv_transpose2d_bias_backward(x, w, c.arg(2), g) if c.need(2) else None
    return gx, gw, gb, None


# Parameters (weight, bias) are alive anyway: keeping them costs nothing and lets backends read them.
RULES["conv2d"] = rule(_conv2d, keep=(0, 1, 2))
RULES["conv_transpose2d"] = rule(_conv_transpose2d, keep=(0, 1, 2))


# -- pooling, interpolation, embedding ----------------------------------------------------------------
def _avg_pool2d(c, g):
    _, k, s, p, cip = c.args
    return (c.b.avg_pool2d_backward(c.x(0), g, k, s, p, cip), None, None, None, None)


def _max_pool2d_with_indices(c, g):
    _, k, s, p, d = c.args
    idx = c.outputs()[1]
    return (c.b.max_pool2d_with_indices_backward(c.x(0), k, s, p, d, g, idx),) + (None,) * 4


def _adaptive_avg_pool2d(c, g):
    return c.b.adaptive_avg_pool2d_backward(c.x(0), g), None


def _interpolate(c, g):
    return c.b.interpolate_backward(c.x(0), g, c.arg(1), c.arg(2)), None, None


def _embedding(c, g):
    return c.b.embedding_backward(c.arg(0), g, c.arg(1)), None


RULES["avg_pool2d"] = rule(_avg_pool2d, keep=(0,))
RULES["max_pool2d_with_indices"] = rule(_max_pool2d_with_indices, keep=(0,), out=True)
RULES["adaptive_avg_pool2d"] = rule(_adaptive_avg_pool2d, keep=(0,))
RULES["interpolate"] = rule(_interpolate, keep=(0,))
RULES["embedding"] = rule(_embedding, keep=(0,))


# -- attention ----------------------------------------------------------------------------------------
def _attention(c, g):
    # One backward primitive for the three gradients: it recomputes the softmax from Q and K
    # (flash-attention style), so the node keeps Q, K, V and the mask, never the
    # [seq_q, seq_k] probabilities.
    q, k, v = c.x(0), c.x(1), c.x(2)
    mask, causal, scale, *drop = c.args[3:]
    dq, dk, dv = c.b.attention_backward(q, k, v, mask, g, causal, scale, *drop)
    return _attention_grads(c, dq, dk, dv)


def _attention_grads(c, dq, dk, dv):
    """The rule's result: the three gradients where needed, None for the mask, flags and (with
    dropout) the probability and the seed words (the same seed regenerates the keep mask)."""
    need = c.parents  # `need[i] is not None` is `c.need(i)`, inline
    return (
        dq if need[0] is not None else None,
        dk if need[1] is not None else None,
        dv if need[2] is not None else None,
    ) + (None,) * (len(c.args) - 3)


RULES["attention"] = rule(_attention, keep=(0, 1, 2))


def _attention_saved(c, g):
    # The backend's flash backward from the forward's own output and row statistic (its
    # log-sum-exp): FlashAttention-2 recomputes the probabilities tile by tile from these and
    # never runs the forward again.
    q, k, v = c.x(0), c.x(1), c.x(2)
    mask, causal, scale, *drop = c.args[3:]
    out, lse = c.outputs()
    dq, dk, dv = c.b.attention_lse_backward(q, k, v, out, lse, mask, g, causal, scale, *drop)
    return _attention_grads(c, dq, dk, dv)


#: `attention` on a backend that implements the flash ops (`attention_with_lse`,
#: `attention_lse_backward`, e.g. burn_gpu's `FlashAttentionOps`): the node also keeps the
#: output and the statistic (Autodiff.setup installs it for `attention` when the inner backend
#: has its own `attention_with_lse`; it is also the declared op's rule).
ATTENTION_SAVED = rule(_attention_saved, keep=(0, 1, 2), out=True)
ATTENTION_SAVED.name = "attention_with_lse"
RULES["attention_with_lse"] = ATTENTION_SAVED


# -- layer norm ---------------------------------------------------------------------------------------
def _layer_norm(c, g):
    args, need = c.args, c.parents  # `c.arg(i)` / `c.need(i)`, inline
    dx, dgamma, dbeta = c.b.layer_norm_backward(c.x(0), c.x(1), g, args[3])
    return (
        dx if need[0] is not None else None,
        dgamma if need[1] is not None else None,
        dbeta if args[2] is not None and need[2] is not None else None,
        None,
    )


# The statistics are recomputed from x in backward: x and gamma are kept, never the output.
RULES["layer_norm"] = rule(_layer_norm, keep=(0, 1))
