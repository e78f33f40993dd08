"""The forward's pieces of the tensor-core attention kernels' shared CUDA C text
(`_attention_parts.py` has the rest): the online softmax over a key tile and the output loop's
head, shared by `_attention_mma.py`'s, `_attention_pipe.py`'s and `_attention_tf32.py`'s
forwards.
"""

from __future__ import annotations


def online_softmax(t: str, i: str, limit: bool = False) -> str:
    """The forward's online softmax over a key tile for the two rows (i: row rr's query) of
    m16 tile `t` ("[mt]", or "" with one tile): scale and mask the scores, the new row max
    across the row's 4 lanes, the weights (dropped ones zeroed in `s`, the row sum undropped),
    and O rescaled. `limit`: the row's first left-out key computed once per row, one compare
    per score (the same keys left out as the four tests per score of the session-17 text)."""
    hid = (
        "j >= lim" if limit else "j >= sk || i >= sq || (causal && j > i + off)"
    ) + " ||\n                          (EXTRAS && has_mask && mbase[(L)i * mq + (L)j * mk]);"
    lim = (
        "      /* keys from lim on are left out: past seq_k, past the diagonal, all past seq_q */\n"
        "      const int lim = i >= sq ? 0 : (causal ? min(sk, i + off + 1) : sk);\n"
        if limit
        else ""
    )
    return f"""\
    for (int rr = 0; rr < 2; ++rr) {{  /* element pairs 2rr, 2rr + 1: one row */
      const int i = {i};
{lim}      float mx = m{t}[rr];
#pragma unroll
      for (int n = 0; n < KEYS / 8; ++n)
#pragma unroll
        for (int e = 2 * rr; e < 2 * rr + 2; ++e) {{
          const int j = k0 + n * 8 + C_COL(lane, e);
          const int hid = {hid}
          const float x = hid ? -INF_F : s{t}[n][e] * scale2;
          s{t}[n][e] = x;
          mx = max_nan(x, mx);
        }}
      mx = max_nan(__shfl_xor_sync(0xffffffffu, mx, 1), mx);  /* the 4 lanes of the row */
      mx = max_nan(__shfl_xor_sync(0xffffffffu, mx, 2), mx);
      float corr = 1.0f, sum = 0.0f;
      if (mx != -INF_F) {{  /* else every key so far is left out: p = 0 */
        corr = exp2f(m{t}[rr] - mx);
        m{t}[rr] = mx;
      }}
#pragma unroll
      for (int n = 0; n < KEYS / 8; ++n)
#pragma unroll
        for (int e = 2 * rr; e < 2 * rr + 2; ++e) {{
          const float p = mx == -INF_F ? 0.0f : exp2f(s{t}[n][e] - mx);
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
