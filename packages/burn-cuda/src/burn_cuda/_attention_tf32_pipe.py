"""The float32 (3xTF32) attention forward with cp.async tile loads (`attn_fwd_tf32`, `pipe=True`:
the default; `_attention_tf32.py` has the session-17 text, the math and the eligibility).

What changes against that text, and why:

- K and V tiles are copied by `cp.async` (`_mma_pipe.copy_rows` at 4 floats a copy, zero-filled
  past seq_k) in commit groups K_0, V_0, K_1, V_1, ...: K_{t+1} is issued once every warp has
  its scores of K_t (it lands during the softmax and P V_t) and V_{t+1} once P V_t is done (it
  lands during S_{t+1}), the bfloat16 forward's overlap (`_attention_pipe.py`) in the same
  two tiles of shared memory. The old text loaded both tiles through registers at the top of
  each step, every warp of the block waiting on global memory twice a step;
- the softmax computes each row's first left-out key once (`online_softmax(limit=True)`, as the
  16-bit forwards) instead of four tests per score.

Measured on the H200 (b32 h8 d64, kernels alone, the two texts A/B in one process): 2.53 -> 2.02 ms
at s1024 (1.63 -> 1.41 causal), the same output bits; the attention suite's float32 s1024
forward went 1.15x -> 0.95x torch SDPA, forward+backward 1.23x -> 1.16x. Asking ptxas for 3
blocks an SM at head dim 64 (168 registers, 92 + 100 bytes of spills) timed the same (2.02),
and ordering the grid longest-causal-block-first across every (batch, head) too (1.41).

Shared memory (bytes): Q or K tile KEYS (D + 4) 4, V tile the same (34,816 at head dim 64).
ptxas 13.0, sm_90, head dim 64: 179 registers (200 with the mask-and-dropout code), no spills,
2 blocks an SM; head dim 32: 143 / 158, 3 blocks (`FWD_BOUNDS`).
"""

from __future__ import annotations

from ._attention_parts import KEY_END, LOAD_Q, forward_args, mask_setup, query_block
from ._attention_parts_fwd import ASYNC_KEY_LOOP, forward_out, online_softmax, out_base
from ._attention_tf32 import PV, SCORES, forward_head

PIPE_FWD_TF32 = (
    """
/* head dim 32: at most 3 blocks an SM asked for, else ptxas aims at 4 and spills (128
   registers, 24 + 36 bytes; 158 at 3); head dim 64: 2, else ptxas aims at 3 since the
   softmax's session-24 text and spills (168 registers, 12 + 24 bytes; ~170-200 at 2) */
#if D == 32
#define FWD_BOUNDS THREADS, 3
#else
#define FWD_BOUNDS THREADS, 2
#endif
"""
    + forward_head("FWD_BOUNDS")
    + KEY_END
    + ASYNC_KEY_LOOP
    + SCORES
    + """\
    __syncthreads();  /* every warp is done with K_t */
    if (more) copy_rows(kt, kbase, ks, k0 + KEYS, sk, KEYS);
    cp_commit();  /* K_{t+1} (or an empty group: the waits count the same) */
#pragma unroll
"""
    + online_softmax("", "q0 + w * 16 + C_ROW(lane, 2 * rr)", limit=True)
    + """\
    CP_WAIT(1);  /* V_t has landed (K_{t+1} may be in flight) */
    __syncthreads();
"""
    + PV
    + """\
    __syncthreads();  /* every warp is done with V_t */
    if (more) copy_rows(vt, vbase, vs, k0 + KEYS, sk, KEYS);
    cp_commit();  /* V_{t+1} */
  }
  CP_WAIT(0);  /* no copy outlives the block (rows that see no key issued K_0 and V_0) */
#pragma unroll
"""
    + forward_out("", "q0 + w * 16 + C_ROW(lane, 2 * rr)")
    + """ {
      obase[wrow + n * 8 + C_COL(lane, 2 * rr)] = o[n][2 * rr] * inv;
      obase[wrow + n * 8 + C_COL(lane, 2 * rr) + 1] = o[n][2 * rr + 1] * inv;
    }
  }
}
"""
)
