"""The fused kernel: `output = relu(lhs @ rhs + bias)` for [batch, m, k] @ [batch, k, n], in
CUDA C (the book's WGSL kernel, with 16x16 shared-memory tiles instead of one thread looping
over k from global memory).

Broadcasting as in the book: a batch dim of 1 in `lhs`, `rhs` or `bias` is reused for every
batch (its batch stride is 0), and `bias` may be [.., 1, n] (per column), [.., m, 1] (per row)
or [.., m, n]: its row and column strides say which.
"""

from __future__ import annotations

TILE = 16

SOURCE = r"""
#define TILE 16
typedef {scalar} scalar_t;

extern "C" __global__ void fused_matmul_add_relu(
    const scalar_t* __restrict__ lhs, const scalar_t* __restrict__ rhs,
    const scalar_t* __restrict__ bias, scalar_t* __restrict__ out,
    int m, int k, int n,
    long long lhs_bs, long long rhs_bs, long long bias_bs, long long bias_rs, long long bias_cs) {
  __shared__ scalar_t a[TILE][TILE];
  __shared__ scalar_t b[TILE][TILE + 1];  // +1: no bank conflicts reading a column
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  const long long z = blockIdx.z;
  const scalar_t* L = lhs + z * lhs_bs;
  const scalar_t* R = rhs + z * rhs_bs;
  scalar_t acc = 0;
  for (int t0 = 0; t0 < k; t0 += TILE) {
    a[ty][tx] = (row < m && t0 + tx < k) ? L[(long long)row * k + t0 + tx] : (scalar_t)0;
    b[ty][tx] = (t0 + ty < k && col < n) ? R[(long long)(t0 + ty) * n + col] : (scalar_t)0;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILE; ++i) acc += a[ty][i] * b[i][tx];
    __syncthreads();
  }
  if (row < m && col < n) {
    scalar_t v = acc + bias[z * bias_bs + row * bias_rs + col * bias_cs];
    out[(z * m + row) * (long long)n + col] = v > (scalar_t)0 ? v : (scalar_t)0;  // ReLU
  }
}
"""

C_TYPES = {"float32": "float", "float64": "double"}


def source(dtype: str) -> str:
    """The kernel's CUDA C for "float32" or "float64"."""
    return SOURCE.replace("{scalar}", C_TYPES[dtype])
