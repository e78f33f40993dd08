"""The forward's pieces of the tensor-core attention kernels' shared CUDA C text
(`_attention_parts.py` has the rest): the online softmax over a key tile and the output loop's
head, shared by `_attention_mma.py`'s, `_attention_pipe.py`'s and `_attention_tf32.py`'s
forwards.
"""

from __future__ import annotations


def _tile_max(t: str, hid: str | None, neg: bool) -> str:
    """The loop over a row's scores of the tile that keeps the largest raw score (`neg`: of the
    negated scores, for a negative scale), after setting each score `hid` leaves out (None: no
    test) to `hidv`, the value the exponent turns into 0."""
    test = (
        "          const int j = k0 + n * 8 + C_COL(lane, e);\n"
        f"          if ({hid}) s{t}[n][e] = hidv;\n"
        if hid
        else ""
    )
    x = f"-s{t}[n][e]" if neg else f"s{t}[n][e]"
    return f"""\
#pragma unroll
        for (int n = 0; n < KEYS / 8; ++n)
#pragma unroll
          for (int e = 2 * rr; e < 2 * rr + 2; ++e) {{
{test}            mr = max_nan({x}, mr);
          }}
"""


def online_softmax(t: str, i: str, limit: bool = False) -> str:
    """The forward's online softmax over a key tile for the two rows (i: row rr's query) of
    m16 tile `t` ("[mt]", or "" with one tile): mask the scores, the row's new scaled max
    across its 4 lanes, the weights (dropped ones zeroed in `s`, the row sum undropped), and O
    rescaled. `limit`: the row's first left-out key computed once per row, one compare per
    score (the same keys left out as the four tests per score of the session-17 text), and
    none at all in a tile whose keys the row all sees (no mask).

    Why this shape (session 24): each score costs the softmax's ALU work, which at head dim 64
    is as much as its share of the two products. The scale goes into the exponent's FFMA
    (`s scale2 - max`) instead of a multiply per score, the max is one FMNMX per score over the
    raw scores (a negative scale takes the max of -s: max(s scale2) = |scale2| max(sign s)) by
    one `max.NaN` (`max_nan`: a NaN score makes its row NaN, as before), and a left-out score
    becomes `hidv` (-inf times the scale's sign: its weight is 0). H200, b32 h8 d64, kernels
    alone, HEAD's text against this one in one process: s1024 bf16 0.478 -> 0.445 ms (causal
    0.348 -> 0.323), float32 2.087 -> 1.941 (1.455 -> 1.389); s128 2-4% faster; outputs within
    one bf16 ulp (float32 1.5e-7), statistic within 1e-6."""
    hid = (
        "j >= lim" if limit else "j >= sk || i >= sq || (causal && j > i + off)"
    ) + " ||\n              (EXTRAS && has_mask && mbase[(L)i * mq + (L)j * mk])"
    lim = (
        "      /* keys from lim on are left out: past seq_k, past the diagonal, all past seq_q */\n"
        "      const int lim = i >= sq ? 0 : (causal ? min(sk, i + off + 1) : sk);\n"
        "      const int test = k0 + KEYS > lim || (EXTRAS && has_mask);  /* else all seen */\n"
        if limit
        else "      const int test = 1;\n"
    )
    return f"""\
    for (int rr = 0; rr < 2; ++rr) {{  /* element pairs 2rr, 2rr + 1: one row */
      const int i = {i};
      const float hidv = scale2 < 0.0f ? INF_F : -INF_F;  /* a left-out score: weight 0 */
      /* the exponent's scale: a zero scale as the least normal float (hidv times 0 would be
         NaN; every weight is 2^(s 2^-126 - max) = 1 to float precision, as 2^0) */
      const float sc = scale2 == 0.0f ? 1.17549435e-38f : scale2;
{lim}      float mr = -INF_F;  /* the tile's largest score times the scale's sign */
      if (scale2 >= 0.0f) {{
        if (test) {{
{_tile_max(t, hid, False)}        }} else {{
{_tile_max(t, None, False)}        }}
      }} else {{
        if (test) {{
{_tile_max(t, hid, True)}        }} else {{
{_tile_max(t, None, True)}        }}
      }}
      mr = max_nan(__shfl_xor_sync(0xffffffffu, mr, 1), mr);  /* the 4 lanes of the row */
      mr = max_nan(__shfl_xor_sync(0xffffffffu, mr, 2), mr);
      const float mx = max_nan(m{t}[rr], mr == -INF_F ? -INF_F : fabsf(sc) * mr);
      float corr = 1.0f, sum = 0.0f;
      if (mx != -INF_F) {{  /* else every key so far is left out: p = 0 */
        corr = ex2(m{t}[rr] - mx);
        m{t}[rr] = mx;
      }}
      /* a row that sees no key yet subtracts 0: its scores are all hidv, s sc = -inf, p = 0 */
      const float mu = mx == -INF_F ? 0.0f : mx;
#pragma unroll
      for (int n = 0; n < KEYS / 8; ++n)
#pragma unroll
        for (int e = 2 * rr; e < 2 * rr + 2; ++e) {{
          const float p = ex2(s{t}[n][e] * sc - mu);
          sum += p;  /* the row sum of the undropped weights */
          s{t}[n][e] = (drop && !drop_keep(rk{t}[rr], k0 + n * 8 + C_COL(lane, e), dthr)) ? 0.0f : p;
        }}
      l{t}[rr] = l{t}[rr] * corr + sum;  /* this lane's part of the row sum */
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {{
        o{t}[n][2 * rr] *= corr;
        o{t}[n][2 * rr + 1] *= corr;
      }}
    }}
"""


def out_base(e: str) -> str:
    """The forward's pointer to its block's (batch, head) of O, set once at the top: the H200's
    float32 forward ran 25% slower (3.36 vs 2.49 ms at s1024) with the (batch, head) part of
    each row's address computed in the output loop, as `bi * outb + hi * outh + i * outs`
    (ptxas kept `bi`, `hi` and the strides through the main loop and scheduled it worse)."""
    return f"  {e}* obase = out + bi * outb + hi * outh;  /* this block's (batch, head) of O */\n"


def forward_out(t: str, i: str) -> str:
    """The forward's output loop over the two rows of m16 tile `t` (as `online_softmax`): the
    row sum across its 4 lanes, the saved statistic, then the loop over its column tiles."""
    return f"""\
  for (int rr = 0; rr < 2; ++rr) {{
    float tot = l{t}[rr];
    tot += __shfl_xor_sync(0xffffffffu, tot, 1);
    tot += __shfl_xor_sync(0xffffffffu, tot, 2);
    const int i = {i};
    if (i >= sq) continue;
    const L row = (L)bh * sq + i, wrow = (L)i * outs;  /* lse's row; O's from `obase` */
    if (C_COL(lane, 0) == 0) lse[row] = tot == 0.0f ? -INF_F : m{t}[rr] + log2f(tot);
    const float inv = tot == 0.0f ? 0.0f : drp / tot;  /* every key left out: 0; drp = 1 / (1 - p) */
#pragma unroll
    for (int n = 0; n < D / 8; ++n)"""


#: the cp.async forwards' key loop up to K_t's wait (`_attention_pipe.py`, `_attention_tf32_pipe.py`):
#: K_0 and V_0 issued as two groups once every warp has its Q fragments (kt held the Q tile)
ASYNC_KEY_LOOP = """\
  __syncthreads();  /* every warp has its Q fragments: kt takes K tiles */
  copy_rows(kt, kbase, ks, 0, sk, KEYS);
  cp_commit();  /* group K_0 */
  copy_rows(vt, vbase, vs, 0, sk, KEYS);
  cp_commit();  /* group V_0 */
  for (int k0 = 0; k0 < kend; k0 += KEYS) {
    const int more = k0 + KEYS < kend;
    CP_WAIT(1);  /* K_t has landed (V_t may be in flight) */
    __syncthreads();
"""
