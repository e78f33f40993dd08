"""`TransformerStaticCache`: a key/value cache of fixed size for autoregressive inference (the
"static cache" of HF transformers and gpt-fast), built so one decode step has the same shapes
and the same ops every token and can therefore be captured once and replayed
(`burn_fusion.capture`: a CUDA graph on Cuda, a recorded enqueue list on OpenCL).

Each layer's keys and values are preallocated to `max_len` positions. A step gets its new
positions [b, n, d_model] and `position`, an Int tensor [1] holding the position of the first
of them: the new keys and values are written at rows `position..position+n-1` by a masked
select (`mask_where` against `positions - position`), never by a slice whose offset is a Python
int, and attention runs over all `max_len` keys with a mask hiding key j from the row at
position p when j > p (also built from tensors: `positions` against `position`). So the op
stream does not depend on the position: no shape, no scalar argument changes between tokens.

Rows past the current position hold zeros or an earlier sequence's values; the mask hides them,
so a cache can be reused for a new prompt (start again at position 0) without clearing it.

The cache is a `Module` whose tensors are `Param`s with fixed ids: a captured step takes it as
an argument and returns the new one, and the capture carries it from call to call (the ids are
part of its guard, so they must not change between tokens).
"""

from __future__ import annotations

from burn_tensor import Int, Tensor

from ._attention import MhaInput
from ._module import Module
from ._param import Param


class TransformerStaticCache(Module):
    """Keys and values of every layer of a transformer stack, [batch, heads, max_len, d_k] each.

    Made by `TransformerEncoder.new_static_cache(batch_size, max_len, device)` (or the
    decoder's); used by `forward_static_cache`, which returns the updated cache.

    Fields: `key`, `value`: one `Param` per layer, Float [batch, heads, max_len, d_k];
    `positions`: Int [max_len], 0..max_len-1 (what the write index and the mask compare the
    position with; a step that needs position ids, e.g. for a positional embedding, can read
    `positions.val().narrow(0, 0, n).add(position)` without an upload); `max_len`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_nn.transformer import TransformerEncoderConfig
        >>> d = NdArray().device()
        >>> enc = TransformerEncoderConfig(8, 16, 2, 2).init(d)
        >>> cache = enc.new_static_cache(batch_size=1, max_len=5, device=d)
        >>> cache.max_len, cache.key[0].dims()
        (5, [1, 2, 5, 4])
    """

    key: list
    value: list
    positions: Param
    max_len: int = 0

    @classmethod
    def empty(cls, n_layers, batch_size, heads, d_k, max_len, device, dtype=None):
        """Zeroed keys and values for `n_layers` layers (see the class docstring)."""
        for name, v in (("batch_size", batch_size), ("max_len", max_len)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"new_static_cache: {name} must be an int >= 1, got {v!r}")
        shape = [batch_size, heads, max_len, d_k]

        def zeros():
            return Param(None, Tensor.zeros(shape, device, dtype=dtype), require_grad=False)

        return cls(
            key=[zeros() for _ in range(n_layers)],
            value=[zeros() for _ in range(n_layers)],
            positions=Param(None, Tensor.arange(0, max_len, device), require_grad=False),
            max_len=max_len,
        )

    def replaced(self, keys: list, values: list) -> TransformerStaticCache:
        """The same cache (same parameter ids) holding `keys` and `values`, one per layer."""
        return TransformerStaticCache(
            key=[Param.updated(p.id, t, False) for p, t in zip(self.key, keys)],
            value=[Param.updated(p.id, t, False) for p, t in zip(self.value, values)],
            positions=self.positions,
            max_len=self.max_len,
        )


class StaticStep:
    """What every layer of one step shares: the cache's write mask and the attention mask, made
    once from `position` (Int [1]) for `n` new positions of `batch` sequences."""

    def __init__(self, cache: TransformerStaticCache, position, n: int, batch: int, mask_pad):
        L = cache.max_len
        positions = cache.positions.val()
        self.n = n
        # offset[j] = j - position: the new row j is written from (0 <= offset < n) and is
        # hidden from new row r when offset[j] > r (key j lies after that row's position)
        self.offset = positions.sub(position)
        self.inside = self.offset.greater_equal_elem(0).bool_and(self.offset.lower_elem(n))
        rows = positions.narrow(0, 0, n).reshape([n, 1]).expand([n, L])
        hidden = self.offset.reshape([1, L]).expand([n, L]).greater(rows)
        self.mask_attn = hidden.reshape([1, n, L]).expand([batch, n, L])
        self.mask_pad = mask_pad

    def write(self, old: Tensor, new: Tensor) -> Tensor:
        """`old` [b, h, max_len, d_k] with rows position..position+n-1 set to `new` [b, h, n,
        d_k]: a masked select, so neither shapes nor kernel arguments depend on the position."""
        dims = old.dims()
        rows = new.expand(dims) if self.n == 1 else new.select(2, self.offset.clamp(0, self.n - 1))
        return old.mask_where(self.inside.reshape([1, 1, dims[2], 1]).expand(dims), rows)


def mha_static(mha, x: Tensor, key: Tensor, value: Tensor, step: StaticStep):
    """`MultiHeadAttention` self-attention of the new positions x [b, n, d_model] over a static
    cache's keys and values [b, h, max_len, d_k]: (context [b, n, d_model], key, value) with the
    new positions' keys and values written in."""
    q = mha._heads(mha.query.forward(x))
    key = step.write(key, mha._heads(mha.key.forward(x)))
    value = step.write(value, mha._heads(mha.value.forward(x)))
    return mha._attend(q, key, value, step.mask_pad, step.mask_attn).context, key, value


def check_step(who: str, cache, x: Tensor, d_model: int, position, mask_pad, mask_attn):
    """Refuse what a static step cannot take (shapes only: a position tensor is not read, so
    the step stays capturable); returns the position as an Int tensor [1]."""
    if not isinstance(cache, TransformerStaticCache):
        raise ValueError(f"{who}: cache must be a TransformerStaticCache (new_static_cache), "
                         f"got {type(cache).__name__}")  # fmt: skip
    dims = x.dims()
    batch, _, L, _ = cache.key[0].dims() if cache.key else (dims[0], 0, cache.max_len, 0)
    if len(dims) != 3 or dims[0] != batch or dims[2] != d_model:
        raise ValueError(f"{who}: new positions must be [batch={batch}, n, d_model={d_model}], "
                         f"got {dims}")  # fmt: skip
    n = dims[1]
    if mask_attn is not None:
        raise ValueError(f"{who}: a static cache builds its own causal mask from the position; "
                         "give no mask_attn")  # fmt: skip
    if mask_pad is not None and mask_pad.dims() != [batch, L]:
        raise ValueError(f"{who}: mask_pad must be [batch={batch}, max_len={L}], "
                         f"got {mask_pad.dims()}")  # fmt: skip
    if isinstance(position, Tensor):
        if position.kind is not Int or position.dims() != [1]:
            raise ValueError(f"{who}: position must be an Int tensor [1] (or an int), got "
                             f"{position.kind.value} {position.dims()}")  # fmt: skip
        if n > L:
            raise ValueError(f"{who}: {n} new positions do not fit the cache's max_len={L}")
        return position
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise ValueError(f"{who}: position must be an int >= 0 or an Int tensor [1], "
                         f"got {position!r}")  # fmt: skip
    if position + n > L:
        raise ValueError(f"{who}: positions {position}..{position + n - 1} run past the "
                         f"cache's max_len={L}")  # fmt: skip
    return Tensor.from_ints([position], x.device)


def encoder_layer_static(layer, x: Tensor, key: Tensor, value: Tensor, step: StaticStep):
    """`TransformerEncoderLayer.forward` of new positions x [b, n, d_model] over a static
    cache's key / value [b, heads, max_len, d_k]: (output, key, value) with the new rows."""
    kv = []
    out = layer._run(x, lambda h: _kept(kv, mha_static(layer.mha, h, key, value, step)))
    return out, kv[0][1], kv[0][2]


def decoder_layer_static(layer, i, x: Tensor, key: Tensor, value: Tensor, step: StaticStep):
    """`TransformerDecoderLayer.forward` of new target positions x [b, n, d_model]: static
    self-attention as the encoder layer's, cross-attention over `i.memory` (all of it, its
    padding mask; projected at each call)."""
    kv = []

    def cross(h):
        return layer.cross_attn.forward(MhaInput(h, i.memory, i.memory, i.memory_mask_pad_)).context

    out = layer._run(x, lambda h: _kept(kv, mha_static(layer.self_attn, h, key, value, step)),
                     cross)  # fmt: skip
    return out, kv[0][1], kv[0][2]


def _kept(kv: list, result: tuple) -> Tensor:
    """Keep (context, key, value) in `kv` for the caller; the context goes on through the layer."""
    kv.append(result)
    return result[0]


def new_cache(layers, attn_of, batch_size: int, max_len: int, device) -> TransformerStaticCache:
    """A zeroed cache for the self-attention `attn_of(layer)` of every layer (its heads, d_k
    and weight dtype; the weights' device unless `device` is given)."""
    mha = attn_of(layers[0])
    w = mha.query.weight.val()
    return TransformerStaticCache.empty(
        len(layers), batch_size, mha.n_heads, mha.d_k, max_len, device or w.device, w.dtype
    )


def run_static(who, layers, attn_of, x, cache, position, mask_pad, mask_attn, call):
    """The new positions x [b, n, d_model] through `layers`, each by `call(layer, x, key, value,
    step) -> (x, key, value)`: (output [b, n, d_model], the updated cache)."""
    mha = attn_of(layers[0])
    d_model = mha.n_heads * mha.d_k
    position = check_step(who, cache, x, d_model, position, mask_pad, mask_attn)
    b, n, _ = x.dims()
    step = StaticStep(cache, position, n, b, mask_pad)
    keys, values = [], []
    for layer, k, v in zip(layers, cache.key, cache.value):
        x, k, v = call(layer, x, k.val(), v.val(), step)
        keys.append(k)
        values.append(v)
    return x, cache.replaced(keys, values)
