"""The CUDA C lines the tensor-core attention kernels share (`_attention_mma.py`'s and
`_attention_tf32.py`'s forward, `_attention_mma_bwd.py`'s and `_attention_tf32_bwd.py`'s two
backward passes, `_attention_fused_bwd.py`'s one): argument lists, the block's (batch, head)
and row/key range, the mask and dropout set-up, the masked weights, Delta, the loops over tiles
and the output loops' heads (the forward's softmax and output: `_attention_parts_fwd.py`). Each
function returns text for one kernel body; `e` is the element type of the tensors ("E" for the
16-bit kernels, "float" for 3xTF32) and `ix` the index that picks a score (the 16-bit kernels
keep a tile of scores per thread, "[n][e]"; the float32 backward one k8 step, "[e]").
"""

from __future__ import annotations

#: the mask (a byte per element, True left out) and dropout (seed words, threshold, 1 / (1 - p))
#: arguments that end every kernel's argument list
MASK_ARGS = """\
    const unsigned char* __restrict__ mask, const int has_mask, const L mo, const L mb,
    const L mh, const L mq, const L mk, const int* __restrict__ dseed, const unsigned int dthr,
    const float drp) {
"""

#: the (batch, head) and causal offset of a block of 64 keys (the dK/dV passes)
_KEY_BLOCK = """\
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int nkb = (sk + KEYS - 1) / KEYS;
  const int bh = blockIdx.x / nkb, blk = blockIdx.x - bh * nkb;  /* causal: early keys see more */
  const int bi = bh / heads, hi = bh - bi * heads;
  const int k0 = blk * KEYS, off = sk - sq;
"""

#: the last key tile a block of queries sees (causal: none past its last row's diagonal)
KEY_END = """\
  int kend = sk;
  if (causal) kend = min(sk, max(0, min(sq - 1, q0 + ROWS - 1) + off + 1));
"""

#: Delta of the block's queries from the dQ pass, their lse and dropout row keys (dK/dV passes)
QUERY_STATS = """\
    if (threadIdx.x < ROWS) {
      const int i = q0 + threadIdx.x;
      ls[threadIdx.x] = i < sq ? lse[(L)bh * sq + i] : -INF_F;
      ds[threadIdx.x] = i < sq ? delta[(L)bh * sq + i] : 0.0f;
      rkq[threadIdx.x] = drop ? drop_rowkey(bk, i) : 0u;
    }
    __syncthreads();
"""


def head(name: str, blocks: int | str = 0) -> str:
    """The first line of kernel `name` (`blocks`: the blocks per SM ptxas must fit, if any; a
    string: a macro of the whole launch-bounds argument list)."""
    bounds = blocks if isinstance(blocks, str) else f"THREADS, {blocks}" if blocks else "THREADS"
    return f'extern "C" __global__ void __launch_bounds__({bounds}) {name}(\n'


def strides(names: str) -> str:
    """The (offset, batch, head, row) stride arguments of each tensor named in `names`."""
    return "".join(f"    const L {n}o, const L {n}b, const L {n}h, const L {n}s,\n" for n in names)


def out_strides(*names: str) -> str:
    """The (batch, head, row) stride arguments of each output named (`{n}b`, `{n}h`, `{n}s`):
    the caller allocates it, at offset 0, contiguous [b, h, s, d] or in the query's [b, s, h, d]
    layout (`_attention_views.split_out`)."""
    return "".join(f"    const L {n}b, const L {n}h, const L {n}s,\n" for n in names)


def forward_args(name: str, e: str, blocks: int | str = 0) -> str:
    """The forward kernel `name`'s argument list: out, lse, Q, K, V and their strides
    (`blocks` as `head`'s)."""
    return (
        head(name, blocks)
        + f"    {e}* __restrict__ out, float* __restrict__ lse, const {e}* __restrict__ q,\n"
        f"    const {e}* __restrict__ k, const {e}* __restrict__ v, const int heads,"
        " const int sq,\n"
        "    const int sk, const int causal, const float scale2,\n"
        + strides("qkv")
        + out_strides("out")
        + MASK_ARGS
    )


def dq_args(name: str, e: str, blocks: int = 0) -> str:
    """The dQ pass `name`'s argument list: dQ, Delta, Q, K, V, O, dO, lse and the strides."""
    return (
        head(name, blocks)
        + f"    {e}* __restrict__ dq, float* __restrict__ delta, const {e}* __restrict__ q,\n"
        f"    const {e}* __restrict__ k, const {e}* __restrict__ v, const {e}* __restrict__ o,\n"
        f"    const {e}* __restrict__ g, const float* __restrict__ lse, const int heads,"
        " const int sq,\n"
        "    const int sk, const int causal, const float scale2, const float scale,\n"
        + strides("qkvog")
        + out_strides("dq")
        + MASK_ARGS
    )


def dkv_args(name: str, e: str, blocks: int | str = 0, dq_acc: bool = False) -> str:
    """The dK/dV pass `name`'s argument list: dK, dV, Q, K, V, dO, lse, Delta and the strides
    (`blocks` as `head`'s). `dq_acc`: first the float32 dQ accumulator `dqa` the fused backward
    adds into, its (batch, head, row) strides first among the outputs'."""
    outs = f"{e}* __restrict__ dk, {e}* __restrict__ dv,"
    outs = f"float* __restrict__ dqa, {outs}\n   " if dq_acc else outs
    return (
        head(name, blocks)
        + f"    {outs} const {e}* __restrict__ q,\n"
        f"    const {e}* __restrict__ k, const {e}* __restrict__ v, const {e}* __restrict__ g,\n"
        "    const float* __restrict__ lse, const float* __restrict__ delta, const int heads,\n"
        "    const int sq, const int sk, const int causal, const float scale2, const float scale,\n"
        + strides("qkvg")
        + out_strides(*(("dqa",) if dq_acc else ()), "dk", "dv")
        + MASK_ARGS
    )


def bases(e: str, names: str) -> str:
    """Pointers to this block's (batch, head) of each tensor in `names`."""
    return "".join(f"  const {e}* {n}base = {n} + {n}o + bi * {n}b + hi * {n}h;\n" for n in names)


def query_block(e: str, extra: str = "") -> str:
    """The (batch, head) and query rows of a block of ROWS queries (the longest causal blocks
    first), `extra` lines, then the K and V pointers (forward and dQ passes)."""
    return (
        "  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;\n"
        "  const int nqb = (sq + ROWS - 1) / ROWS;\n"
        "  const int bh = blockIdx.x / nqb;\n"
        "  const int blk = nqb - 1 - (blockIdx.x - bh * nqb);"
        "  /* causal: the longest blocks first */\n"
        "  const int bi = bh / heads, hi = bh - bi * heads;\n"
        "  const int q0 = blk * ROWS, off = sk - sq;\n" + extra + bases(e, "kv")
    )


def mask_setup(first_load: str) -> str:
    """The mask's (batch, head), whether dropout runs and its (batch, head) key, then the
    block's first tile load `first_load`."""
    return (
        "  const unsigned char* mbase = mask + mo + bi * mb + hi * mh;  /* True: left out */\n"
        "  const int drop = EXTRAS && dthr != 0u;\n"
        "  const U32 bk = drop ? drop_bhkey(dseed, bh) : 0u;\n" + first_load
    )


#: the Q tile load of a query block
LOAD_Q = "  load_rows(kt, q + qo + bi * qb + hi * qh, qs, q0, sq, ROWS);\n"


def load_kv(kdst: str, vdst: str) -> str:
    """The K and V block loads of a key block into the tiles at `kdst` and `vdst`."""
    return (
        f"  load_rows({kdst}, k + ko + bi * kb + hi * kh, ks, k0, sk, KEYS);\n"
        f"  load_rows({vdst}, v + vo + bi * vb + hi * vh, vs, k0, sk, KEYS);\n"
        "  __syncthreads();\n"
    )


#: the K and V block loads of a key block (the dK/dV passes)
LOAD_KV = load_kv("qt", "gt")


def key_loop(what: str) -> str:
    """The loop over the key tiles a query block sees, up to its K tile load (`what`: the
    tiles loaded before the loop)."""
    return (
        KEY_END + "  for (int k0 = 0; k0 < kend; k0 += KEYS) {\n"
        f"    __syncthreads();  /* every warp is done with the last tiles (and the {what}) */\n"
        "    load_rows(kt, kbase, ks, k0, sk, KEYS);\n"
    )


#: the dK and dV accumulators and the first query tile that sees a key block
DKV_ACC = (
    "  float dka[D / 8][4], dva[D / 8][4];\n"
    "#pragma unroll\n"
    "  for (int n = 0; n < D / 8; ++n)\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < 4; ++e) dka[n][e] = dva[n][e] = 0.0f;\n"
    "  const int qstart = causal ? max(0, k0 - off) / ROWS * ROWS : 0;"
    "  /* i sees j iff j <= i + off */\n"
)


def query_loop() -> str:
    """The dK and dV accumulators and the loop over the query tiles that see a key block, up to
    its Q and dO tile loads."""
    return (
        DKV_ACC + "  for (int q0 = qstart; q0 < sq; q0 += ROWS) {\n"
        "    __syncthreads();"
        "  /* every warp is done with the last tiles (and the K and V blocks) */\n"
        "    load_rows(qt, qbase, qs, q0, sq, ROWS);\n"
        "    load_rows(gt, gbase, gs, q0, sq, ROWS);\n"
    )


def copy_qg(q0: str, indent: str) -> str:
    """The Q and dO tiles of query tile `q0` copied by cp.async into qt and gt (`_mma_pipe`),
    not committed; each line indented by `indent`."""
    return (
        f"{indent}copy_rows(qt, qbase, qs, {q0}, sq, ROWS);\n"
        f"{indent}copy_rows(gt, gbase, gs, {q0}, sq, ROWS);\n"
    )


def query_loop_async() -> str:
    """`query_loop` with the Q and dO tiles copied by cp.async: the first tile's issued before
    the loop (the K and V fragments taken: the V block's staging tiles are free), each later
    one by the previous step (`COPY_NEXT_QG`, once its products no longer read the tiles), and
    waited for at the top of its step."""
    return (
        DKV_ACC
        + "  __syncthreads();  /* every warp has its K and V fragments: qt and gt take tiles */\n"
        + copy_qg("qstart", "  ")
        + "  cp_commit();\n"
        "  for (int q0 = qstart; q0 < sq; q0 += ROWS) {\n"
        "    CP_WAIT(0);  /* this tile's copies have landed */\n"
        "    __syncthreads();  /* everyone's copies, and every warp is done with the last tile */\n"
    )


#: inside a step, once no warp reads qt and gt again: the next tile's copies issued (an empty
#: group past the last tile)
COPY_NEXT_QG = (
    "      if (q0 + ROWS < sq) {\n"
    + copy_qg("q0 + ROWS", "        ")
    + "      }\n      cp_commit();\n"
)


#: the dQ pass's Q and dO tile loads (the session-17 kernels)
LOAD_QG = LOAD_Q + "  load_rows(vt, gbase, gs, q0, sq, ROWS);\n"


def dq_block(e: str, step: int, inner: str, loads: str = LOAD_QG, wait: str = "") -> str:
    """The dQ pass's block set-up: its queries (`query_block`), the mask and dropout, the Q and
    dO tiles (`loads`), then Delta = rowsum(dO * O), one row per thread, written for the dK/dV
    pass and kept in shared `dl`; `inner` adds `step` elements from 16-byte loads x, y; `wait`
    (the tiles' asynchronous copies) before the block's barrier."""
    return (
        query_block(e)
        + bases(e, "g")
        + mask_setup(loads)
        + delta_rows(e, step, inner, "    dl[threadIdx.x] = acc;\n")
        + wait
        + "  __syncthreads();\n"
    )


def delta_rows(e: str, step: int, inner: str, keep: str = "") -> str:
    """Delta = rowsum(dO * O) of the block's ROWS rows from q0, one row per thread, written
    to `delta`; `inner` adds `step` elements from 16-byte loads x, y; `keep`: a line that
    also keeps `acc` (the thread's row sum) in the block."""
    return (
        "  if (threadIdx.x < ROWS) {  /* Delta = rowsum(dO * O), one row per thread */\n"
        "    const int i = q0 + threadIdx.x;\n"
        "    float acc = 0.0f;\n"
        "    if (i < sq) {\n"
        f"      const {e}* orow = o + oo + bi * ob + hi * oh + (L)i * os;\n"
        f"      const {e}* grow = gbase + (L)i * gs;\n"
        f"      for (int c = 0; c < D; c += {step}) {{"
        "  /* 16-byte loads (the views are 16-byte aligned) */\n" + inner + "      }\n"
        "      delta[(L)bh * sq + i] = acc;\n"
        "    }\n" + keep + "  }\n"
    )


#: the dQ pass's rows: lse, dropout row key and Delta of rows C_ROW(lane, 0) and +8, and the
#: dQ accumulator (DQ_ROWS: then the key loop up to the K and V tile loads)
DQ_STATS = """\
  float lr[2], dr[2];
  U32 rk[2];  /* the dropout row keys */
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int row = w * 16 + C_ROW(lane, 2 * rr), i = q0 + row;
    lr[rr] = i < sq ? lse[(L)bh * sq + i] : -INF_F;
    rk[rr] = drop ? drop_rowkey(bk, i) : 0u;
    dr[rr] = dl[row];
  }
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[n][e] = 0.0f;
"""
DQ_ROWS = DQ_STATS + key_loop("Q and dO tiles") + "    load_rows(vt, vbase, vs, k0, sk, KEYS);\n"


_HID = "j >= sk || li == -INF_F || (causal && j > i + off)"  # the session-17 test per score


def _weight(ix: str, rk: str, hid: str = _HID) -> str:
    """Score `s{ix}` (query i, key j, row statistic li) to its weight p: 0 where the key is
    left out (`hid`, or the mask); z: 0 where dropout drops it, else 1 / (1 - p)."""
    return (
        f"        const int hid = {hid} ||\n"
        "                        (EXTRAS && has_mask && mbase[(L)i * mq + (L)j * mk]);\n"
        f"        const float p = hid ? 0.0f : ex2(s{ix} * scale2 - li);\n"
        f"        const float z = (drop && !drop_keep({rk}, j, dthr)) ? 0.0f : drp;"
        "  /* keep / (1 - p) */\n"
    )


#: the dQ pass's first left-out key of each of a thread's two rows (past seq_k or the
#: diagonal; rows past seq_q have lse -inf), for `dq_scores(limit=True)`
DQ_LIMITS = """\
  int lim[2];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int i = q0 + w * 16 + C_ROW(lane, 2 * rr);
    lim[rr] = causal ? min(sk, i + off + 1) : sk;
  }
"""
#: the dK/dV pass's first query that sees each of a thread's two keys (none past seq_k), for
#: `dkv_scores(limit=True)`
DKV_LIMITS = """\
  int qlo[2];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int j = k0 + w * 16 + C_ROW(lane, 2 * rr);
    qlo[rr] = j >= sk ? 0x7fffffff : (causal ? j - off : 0);
  }
"""


def dq_scores(ix: str, at: str = "n * 8", limit: bool = False) -> str:
    """The dQ pass's element e of key tile n (its first key `at` past k0): S and dP to dS, in
    place in `s`. `limit`: left-out keys by one compare to the row's `DQ_LIMITS`."""
    hid = "j >= lim[e >> 1] || li == -INF_F"
    return (
        f"        const int i = q0 + w * 16 + C_ROW(lane, e), j = k0 + {at} + C_COL(lane, e);\n"
        "        const float li = lr[e >> 1];\n"
        + (_weight(ix, "rk[e >> 1]", hid) if limit else _weight(ix, "rk[e >> 1]"))
        + f"        s{ix} = p * (dp{ix} * z - dr[e >> 1]);  /* dS */\n"
    )


def dkv_scores(ix: str, at: str = "n * 8", limit: bool = False) -> str:
    """The dK/dV pass's element e of query tile n (its first query `at` past q0): Sᵗ to the
    dropped weight (for dV) in `s`, dPᵗ to dSᵗ in `dp`. `limit`: left-out pairs by one compare
    to the key's `DKV_LIMITS`."""
    hid = "i < qlo[e >> 1] || li == -INF_F"
    return (
        f"        const int col = {at} + C_COL(lane, e), i = q0 + col;\n"
        "        const int j = k0 + w * 16 + C_ROW(lane, e);\n"
        "        const float li = ls[col];  /* -inf past seq_q and for rows that see no key */\n"
        + (_weight(ix, "rkq[col]", hid) if limit else _weight(ix, "rkq[col]"))
        + f"        s{ix} = p * z;  /* the dropped weight, for dV */\n"
        f"        dp{ix} = p * (dp{ix} * z - ds[col]);  /* dSᵗ */\n"
    )


#: the dQ pass's output loop over its rows, up to the loop over the row's column tiles
DQ_OUT = """\
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int i = q0 + w * 16 + C_ROW(lane, 2 * rr);
    if (i >= sq) continue;
    const L wrow = bi * dqb + hi * dqh + (L)i * dqs;  /* dQ's row i (its own strides) */
#pragma unroll
    for (int n = 0; n < D / 8; ++n)"""

#: the dK/dV pass's output loop over its keys, up to the element offset of a column tile
DKV_OUT = """\
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int j = k0 + w * 16 + C_ROW(lane, 2 * rr);
    if (j >= sk) continue;
    const L kr = bi * dkb + hi * dkh + (L)j * dks;  /* dK's and dV's row j (their strides) */
    const L vr = bi * dvb + hi * dvh + (L)j * dvs;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const L at = n * 8 + C_COL(lane, 2 * rr);
"""


def key_block(e: str, loads: str = LOAD_KV) -> str:
    """The dK/dV pass's block set-up: its keys, the Q and dO pointers, the mask and dropout and
    the K and V block loads (`loads`)."""
    return _KEY_BLOCK + bases(e, "qg") + mask_setup(loads)
