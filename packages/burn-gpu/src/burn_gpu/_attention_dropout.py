"""Dropout on the attention weights inside the flash kernels: the keep-mask hash in C.

The same formula as `burn_tensor._attention_dropout` (its docstring defines it; the tests
compare the kernels against that numpy code): a pure function of (seed words, batch * heads +
head, query row, key column), so the forward and the backward kernels regenerate the mask in
any tile order and nothing [seq_q, seq_k] is stored. Every kernel takes three trailing
arguments: `dseed` (the two seed words, int32, in device memory: a captured step replays the
draw that fills them), `dthr` (the uint32 threshold floor(p * 2^32); 0 = no dropout, which
skips the hashing) and `drp` (1 / (1 - p); 1 without dropout).

Forward: the row sum l uses the undropped probabilities; the output accumulates the dropped
ones and is scaled by drp / l. Backward (FlashAttention-2's dropout backward): dV from the
dropped P (times drp), dP = (dO Vᵗ) * keep * drp, dS = P (dP - delta) with
delta_i = rowsum(dO_i * O_i) (O the dropped output).
"""

from __future__ import annotations

#: C helpers, rendered once per program (after the typedefs)
DROP_HELPERS = """
typedef unsigned int U32;
@DEV@U32 drop_mix(U32 x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
@DEV@U32 drop_bhkey(@G@const int* dseed, const int bh) {
  return drop_mix(drop_mix((U32)bh ^ (U32)dseed[0]) + (U32)dseed[1]);
}
@DEV@U32 drop_rowkey(const U32 bhkey, const int i) { return drop_mix(bhkey ^ (U32)i); }
@DEV@int drop_keep(const U32 rowkey, const int j, const U32 thr) {
  return drop_mix(rowkey + (U32)j * 0x9e3779b9u) >= thr;
}
"""

#: the trailing kernel parameters (after the mask strides)
DROP_PARAMS = ",\n    @G@const int* dseed, const unsigned int dthr, const A drp"


def drop_args(dropout: float) -> tuple[int, float]:
    """(dthr, drp) of a call with dropout probability `dropout` in [0, 1)."""
    from burn_tensor.ops import attention_drop_threshold as threshold

    if not dropout:
        return 0, 1.0
    return threshold(dropout), 1.0 / (1.0 - dropout)
