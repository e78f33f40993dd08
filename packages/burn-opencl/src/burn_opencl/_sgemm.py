"""A register-blocked SGEMM: 4-wide vector loads, local-memory double buffering, 8x8 outputs.

The plain tiled kernel (`_matmul._SRC`) reaches ~12.5 TFLOP/s on an H100 through NVIDIA's
OpenCL: every multiply-add needs a scalar local-memory read and the global loads are scalar.
This kernel is the classic CUDA-SGEMM layout written in OpenCL C:

- a work-group of (BN/TN) x (BM/TM) items computes a BM x BN block; each item a TM x TN register
  block split in 4x4 sub-blocks spaced BM/GM rows and BN/GN columns apart (GM = TM/4), so its
  reads of a k-row of the staged tiles are `T4` local loads that neighbouring items take from
  neighbouring 16-byte words (no bank conflicts) and its stores are `T4` writes;
- global reads are `T4` loads when the operand allows (`mode`, chosen per call): A along k
  (row-major A) or along m (a transposed view), B along n (row-major B) or along k (transposed);
  mode 0 reads scalars through arbitrary strides, so any view still runs without a copy;
- the next k-tile is fetched into registers while the current one is multiplied, then stored
  into the other half of the double-buffered local tiles: one barrier per k-tile.

Edges (M, N, K not multiples of the block) are guarded loads/stores; the vector modes need the
vectorised extent to be a multiple of 4 and 16-byte aligned rows, which the launcher checks.
"""

from __future__ import annotations

_SRC = """
#define NT ((BM / TM) * (BN / TN))
#define GM (TM / 4)
#define GN (TN / 4)
#define LA (BM * BK / NT)
#define LB (BK * BN / NT)
__kernel __attribute__((reqd_work_group_size(BN / TN, BM / TM, 1)))
void sgemm(const MM P, __global T* o, __global const T* x, __global const T* y) {
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * (BN / TN) + tx;
  const int n0 = get_group_id(0) * BN, m0 = get_group_id(1) * BM;
  const int bi = get_group_id(2);
  int r = bi, xo = P.xo, yo = P.yo;
  for (int d = P.nb - 1; d >= 0; --d) {
    int q = r / P.bshape[d]; int c = r - q * P.bshape[d]; r = q;
    xo += c * P.xb[d]; yo += c * P.yb[d];
  }
  __global const T* xp = x + xo;
  __global const T* yp = y + yo;
  __local T4 As[2][BK][BM / 4];
  __local T4 Bs[2][BK][BN / 4];
  T ra[LA], rb[LB];
  T acc[TM][TN];
  for (int i = 0; i < TM; ++i) for (int j = 0; j < TN; ++j) acc[i][j] = (T)0;
  const int ntiles = (P.K + BK - 1) / BK;

#define LOAD_A(k0) do { \\
  for (int v = 0; v < LA / 4; ++v) { \\
    int l = tid + v * NT; \\
    if (AMODE == 1) { \\
      int mm = l / (BK / 4), kk = (l % (BK / 4)) * 4, gm = m0 + mm, gk = (k0) + kk; \\
      T4 t = (gm < P.M && gk < P.K) ? *(__global const T4*)(xp + gm * P.xr + gk) : (T4)0; \\
      ra[4 * v] = t.x; ra[4 * v + 1] = t.y; ra[4 * v + 2] = t.z; ra[4 * v + 3] = t.w; \\
    } else if (AMODE == 2) { \\
      int mm = (l % (BM / 4)) * 4, kk = l / (BM / 4), gm = m0 + mm, gk = (k0) + kk; \\
      T4 t = (gm < P.M && gk < P.K) ? *(__global const T4*)(xp + gk * P.xc + gm) : (T4)0; \\
      ra[4 * v] = t.x; ra[4 * v + 1] = t.y; ra[4 * v + 2] = t.z; ra[4 * v + 3] = t.w; \\
    } else { \\
      for (int e = 0; e < 4; ++e) { \\
        int le = l * 4 + e, mm = le % BM, kk = le / BM, gm = m0 + mm, gk = (k0) + kk; \\
        ra[4 * v + e] = (gm < P.M && gk < P.K) ? xp[gm * P.xr + gk * P.xc] : (T)0; \\
      } \\
    } \\
  } } while (0)

#define STORE_A(buf) do { \\
  __local T* as = (__local T*)As[buf]; \\
  for (int v = 0; v < LA / 4; ++v) { \\
    int l = tid + v * NT; \\
    if (AMODE == 1) { \\
      int mm = l / (BK / 4), kk = (l % (BK / 4)) * 4; \\
      for (int e = 0; e < 4; ++e) as[(kk + e) * BM + mm] = ra[4 * v + e]; \\
    } else if (AMODE == 2) { \\
      int mm = (l % (BM / 4)) * 4, kk = l / (BM / 4); \\
      for (int e = 0; e < 4; ++e) as[kk * BM + mm + e] = ra[4 * v + e]; \\
    } else { \\
      for (int e = 0; e < 4; ++e) { int le = l * 4 + e; as[le] = ra[4 * v + e]; } \\
    } \\
  } } while (0)

#define LOAD_B(k0) do { \\
  for (int v = 0; v < LB / 4; ++v) { \\
    int l = tid + v * NT; \\
    if (BMODE == 1) { \\
      int nn = (l % (BN / 4)) * 4, kk = l / (BN / 4), gn = n0 + nn, gk = (k0) + kk; \\
      T4 t = (gn < P.N && gk < P.K) ? *(__global const T4*)(yp + gk * P.yr + gn) : (T4)0; \\
      rb[4 * v] = t.x; rb[4 * v + 1] = t.y; rb[4 * v + 2] = t.z; rb[4 * v + 3] = t.w; \\
    } else if (BMODE == 2) { \\
      int nn = l / (BK / 4), kk = (l % (BK / 4)) * 4, gn = n0 + nn, gk = (k0) + kk; \\
      T4 t = (gn < P.N && gk < P.K) ? *(__global const T4*)(yp + gn * P.yc + gk) : (T4)0; \\
      rb[4 * v] = t.x; rb[4 * v + 1] = t.y; rb[4 * v + 2] = t.z; rb[4 * v + 3] = t.w; \\
    } else { \\
      for (int e = 0; e < 4; ++e) { \\
        int le = l * 4 + e, nn = le % BN, kk = le / BN, gn = n0 + nn, gk = (k0) + kk; \\
        rb[4 * v + e] = (gn < P.N && gk < P.K) ? yp[gk * P.yr + gn * P.yc] : (T)0; \\
      } \\
    } \\
  } } while (0)

#define STORE_B(buf) do { \\
  __local T* bs = (__local T*)Bs[buf]; \\
  for (int v = 0; v < LB / 4; ++v) { \\
    int l = tid + v * NT; \\
    if (BMODE == 1) { \\
      int nn = (l % (BN / 4)) * 4, kk = l / (BN / 4); \\
      for (int e = 0; e < 4; ++e) bs[kk * BN + nn + e] = rb[4 * v + e]; \\
    } else if (BMODE == 2) { \\
      int nn = l / (BK / 4), kk = (l % (BK / 4)) * 4; \\
      for (int e = 0; e < 4; ++e) bs[(kk + e) * BN + nn] = rb[4 * v + e]; \\
    } else { \\
      for (int e = 0; e < 4; ++e) { int le = l * 4 + e; bs[le] = rb[4 * v + e]; } \\
    } \\
  } } while (0)

  LOAD_A(0); LOAD_B(0);
  STORE_A(0); STORE_B(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  int cur = 0;
  for (int t = 0; t < ntiles; ++t) {
    const int more = t + 1 < ntiles;
    if (more) { LOAD_A((t + 1) * BK); LOAD_B((t + 1) * BK); }
    #pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      T a[TM], b[TN];
      #pragma unroll
      for (int g = 0; g < GM; ++g) {
        T4 v = As[cur][kk][g * (BM / 4 / GM) + ty];
        a[4 * g] = v.x; a[4 * g + 1] = v.y; a[4 * g + 2] = v.z; a[4 * g + 3] = v.w;
      }
      #pragma unroll
      for (int h = 0; h < GN; ++h) {
        T4 v = Bs[cur][kk][h * (BN / 4 / GN) + tx];
        b[4 * h] = v.x; b[4 * h + 1] = v.y; b[4 * h + 2] = v.z; b[4 * h + 3] = v.w;
      }
      #pragma unroll
      for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    if (more) { STORE_A(cur ^ 1); STORE_B(cur ^ 1); }
    barrier(CLK_LOCAL_MEM_FENCE);
    cur ^= 1;
  }
  __global T* op = o + bi * P.M * P.N;
  /* constant indices into acc only (no pointer into it): it must stay in registers */
  #pragma unroll
  for (int g = 0; g < GM; ++g) {
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int gm = m0 + g * (BM / GM) + ty * 4 + i;
      if (gm < P.M) {
        #pragma unroll
        for (int h = 0; h < GN; ++h) {
          const int gn = n0 + h * (BN / GN) + tx * 4;
          const int row = 4 * g + i, col = 4 * h;
          T4 v = (T4)(acc[row][col], acc[row][col + 1], acc[row][col + 2], acc[row][col + 3]);
          __global T* dst = op + gm * P.N + gn;
          if (OUTVEC && gn < P.N) {
            *(__global T4*)dst = v;
          } else {
            if (gn < P.N) dst[0] = v.x;
            if (gn + 1 < P.N) dst[1] = v.y;
            if (gn + 2 < P.N) dst[2] = v.z;
            if (gn + 3 < P.N) dst[3] = v.w;
          }
        }
      }
    }
  }
}
"""


def render(ctype: str, mm_struct: str, bm, bn, bk, tm, tn, amode, bmode, outvec) -> str:
    """OpenCL C of the register-blocked kernel `sgemm` for one tile and operand layout."""
    head = f"typedef {ctype} T;\ntypedef {ctype}4 T4;\n" + mm_struct
    defs = {"BM": bm, "BN": bn, "BK": bk, "TM": tm, "TN": tn}
    defs.update({"AMODE": amode, "BMODE": bmode, "OUTVEC": int(outvec)})
    head += "".join(f"#define {k} {v}\n" for k, v in defs.items())
    return head + _SRC


def a_mode(m, k, xr, xc, xo, xb) -> int:
    """1: rows of A contiguous along k in aligned T4s; 2: columns contiguous along m; 0: scalar."""
    aligned = xo % 4 == 0 and all(s % 4 == 0 for s in xb)
    if xc == 1 and k % 4 == 0 and xr % 4 == 0 and aligned:
        return 1
    if xr == 1 and m % 4 == 0 and xc % 4 == 0 and aligned:
        return 2
    return 0


def b_mode(k, n, yr, yc, yo, yb) -> int:
    """1: rows of B contiguous along n in aligned T4s; 2: contiguous along k; 0: scalar."""
    aligned = yo % 4 == 0 and all(s % 4 == 0 for s in yb)
    if yc == 1 and n % 4 == 0 and yr % 4 == 0 and aligned:
        return 1
    if yr == 1 and k % 4 == 0 and yc % 4 == 0 and aligned:
        return 2
    return 0
