"""Indexing ops: gathers, scatters, one-hot, top-k, non-zero."""

from __future__ import annotations

from ._ops_shape import ints_arg
from ._registry import op
from ._rt_tfidf import ngram_table


@op("Gather", attrs=("axis",))
def gather(ctx):
    axis = ctx.axis("axis", 0, ctx.rank(0))
    table = ctx.const(0)
    if (
        table is not None and table.ndim == 2 and axis == 0 and ctx.elem(0) == 1
        and ctx.const(1) is None and ctx.rank(1) == 2 and ctx.elem(1) in (6, 7)
    ):  # fmt: skip
        # A float table looked up by run-time [batch, seq] ids: burn_nn's Embedding (ids are
        # rows, 0 <= id < rows, as torch's nn.Embedding that exported it requires).
        init = f"EmbeddingConfig({table.shape[0]}, {table.shape[1]}).init(device)"
        name = ctx.add_field("embedding", "Embedding", init, {"weight": table})
        ctx.set(0, f"self.{name}.forward({ctx.x(1)})")
        return
    pick = _constant_pick(ctx, axis)
    if pick is not None:  # `qkv[1]` as burn says it: one row narrowed, its axis dropped
        ctx.set(0, pick)
        return
    ctx.set(0, f"ops.gather({ctx.x(0)}, {ctx.x(1)}, {axis}, {ctx.rank(1)})")


def _constant_pick(ctx, axis: int) -> str | None:
    """A Gather of one constant scalar index within a known dim as `x.narrow(axis, i, 1)`
    (`.squeeze_dim(axis)` unless the result is rank 0, held as `[1]`); None otherwise."""
    idx = ctx.const(1)
    if idx is None or idx.ndim != 0 or ctx.elem(1) not in (6, 7) or ctx.const(0) is not None:
        return None
    dim = ctx.shape(0)[axis]
    i = int(idx)
    if not isinstance(dim, int) or not -dim <= i < dim:
        return None  # the helper says what is wrong at run time
    expr = f"{ctx.x(0)}.narrow({axis}, {i % dim}, 1)"
    return expr + (f".squeeze_dim({axis})" if ctx.rank(0) >= 2 else "")


@op("GatherElements", attrs=("axis",))
def gather_elements(ctx):
    axis = ctx.axis("axis", 0, ctx.rank(0))
    ctx.set(0, f"ops.gather_elements({ctx.x(0)}, {ctx.x(1)}, {axis})")


@op("GatherND", attrs=("batch_dims",))
def gather_nd(ctx):
    ctx.set(0, f"ops.gather_nd({ctx.x(0)}, {ctx.x(1)}, {ctx.attr('batch_dims', 0)})")


def _reduction(ctx) -> str:
    """The scatter's `reduction` attribute: all of ONNX's (`_rt_scatter.REDUCTIONS`)."""
    red = ctx.attr("reduction", "none")
    if red not in ("none", "add", "mul", "max", "min"):
        ctx.fail(f"reduction {red!r} is not supported")
    return red


@op("ScatterElements", "Scatter", attrs=("axis", "reduction"))
def scatter_elements(ctx):
    axis = ctx.axis("axis", 0, ctx.rank(0))
    red = _reduction(ctx)
    ctx.set(0, f"ops.scatter_elements({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {axis}, {red!r})")


@op("ScatterND", attrs=("reduction",))
def scatter_nd(ctx):
    red = _reduction(ctx)
    ctx.set(0, f"ops.scatter_nd({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {red!r})")


@op("OneHot", attrs=("axis",))
def one_hot(ctx):
    axis = ctx.attr("axis", -1)
    ctx.set(0, f"ops.one_hot({ctx.x(0)}, {ctx.x(1)}, {ctx.x(2)}, {axis}, {ctx.rank(0)})")


@op("TopK", attrs=("axis", "largest", "sorted"))
def topk(ctx):
    axis = ctx.axis("axis", -1, ctx.rank(0))
    k = ints_arg(ctx, 1)
    largest = bool(ctx.attr("largest", 1))
    ctx.emit(f"{ctx.out(0)}, {ctx.out(1)} = ops.topk({ctx.x(0)}, {k}, {axis}, {largest})")


@op("NonZero")
def nonzero(ctx):
    ctx.set(0, f"ops.nonzero({ctx.x(0)})")


@op("ReverseSequence", attrs=("batch_axis", "time_axis"))
def reverse_sequence(ctx):
    ba, ta = ctx.attr("batch_axis", 1), ctx.attr("time_axis", 0)
    ctx.set(0, f"ops.reverse_sequence({ctx.x(0)}, {ctx.x(1)}, {ba}, {ta})")


@op("Unique", attrs=("axis", "sorted"))
def unique(ctx):
    axis = ctx.attr("axis")
    sorted_ = bool(ctx.attr("sorted", 1))
    outs = ", ".join(ctx.out(i) if ctx.has_out(i) else "_" for i in range(4))
    ctx.emit(f"{outs} = ops.unique({ctx.x(0)}, {axis}, {sorted_})")


@op("TensorScatter", attrs=("axis", "mode"))
def tensor_scatter(ctx):
    axis = ctx.axis("axis", -2, ctx.rank(0))
    if axis == 0:
        ctx.fail("axis 0 is the batch axis")
    mode = ctx.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        ctx.fail(f"mode {mode!r} is not supported")
    w = ctx.x(2) if ctx.has(2) else "None"
    ctx.set(0, f"ops.tensor_scatter({ctx.x(0)}, {ctx.x(1)}, {w}, {mode!r}, {axis})")


@op("NonMaxSuppression", attrs=("center_point_box",))
def non_max_suppression(ctx):
    args = ", ".join(ctx.x(i) if ctx.has(i) else "None" for i in range(5))
    center = bool(ctx.attr("center_point_box", 0))
    ctx.set(0, f"ops.non_max_suppression({args}, {center})")


@op(
    "TfIdfVectorizer",
    attrs=(
        "max_gram_length",
        "max_skip_count",
        "min_gram_length",
        "mode",
        "ngram_counts",
        "ngram_indexes",
        "pool_int64s",
        "pool_strings",
        "weights",
    ),
)
def tfidf_vectorizer(ctx):
    if "pool_strings" in ctx.attrs or "pool_int64s" not in ctx.attrs:
        ctx.fail("only integer tokens (pool_int64s) are supported")
    mode = ctx.attr("mode")
    if mode not in ("TF", "IDF", "TFIDF"):
        ctx.fail(f"mode {mode!r}")
    indexes = list(ctx.attr("ngram_indexes"))
    table = ngram_table(list(ctx.attr("pool_int64s")), list(ctx.attr("ngram_counts")), indexes)
    weights = [float(w) for w in ctx.attr("weights", [])]
    size = max(indexes) + 1 if indexes else 0
    lo, hi, skip = (ctx.attr(a) for a in ("min_gram_length", "max_gram_length", "max_skip_count"))
    ctx.set(
        0,
        f"ops.tfidf({ctx.x(0)}, {table!r}, {lo}, {hi}, {skip}, {mode!r}, {weights!r}, {size})",
    )
