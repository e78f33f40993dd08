"""Counter-based random numbers: Philox4x32-10 of (element index, call counter) under the seed.

Element i of the c-th random call of a device draws the four 32-bit words
philox((i, c_lo, c_hi, 0), (seed_lo, seed_hi)): no generator state lives on the device, and the
words are the same on every OpenCL device. Uniform values and integer draws use only integer
arithmetic and exact scaling, so they match bit for bit everywhere; normal values go through
log/cos and match to the device's math-library rounding.
"""

from __future__ import annotations

import os

import numpy as np

from ._array import ClArray
from ._runtime import ctype

_SRC = """
uint4 philox(uint4 c, uint2 k) {
  for (int r = 0; r < 10; ++r) {
    ulong p0 = (ulong)c.x * 0xD2511F53u, p1 = (ulong)c.z * 0xCD9E8D57u;  /* = mul_hi, vectorisable */
    uint lo0 = (uint)p0, hi0 = (uint)(p0 >> 32);
    uint lo1 = (uint)p1, hi1 = (uint)(p1 >> 32);
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k += (uint2)(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}
/* [0, 1) from two words: 24 bits for float, 53 for double, exactly scaled */
F unit(uint a, uint b) {
#ifdef F64
  return (F)(((ulong)(a >> 5) << 26) | (ulong)(b >> 6)) * (F)1.1102230246251565e-16;
#else
  return (F)(a >> 8) * (F)5.9604644775390625e-8;
#endif
}
__kernel void random(__global T* o, int n, uint s0, uint s1, uint c0, uint c1, int kind, F a, F b) {
  /* one element per work-item (no grid-stride loop): PoCL vectorises across a group's items */
  int i = get_global_id(0);
  if (i < n) {
    uint4 w = philox((uint4)((uint)i, c0, c1, 0u), (uint2)(s0, s1));
    F u = unit(w.x, w.y);
    if (kind == 3) { o[i] = (T)(u < a ? 1 : 0); return; }
#ifdef INT_OUT
    if (kind == 2) {
      F u2 = unit(w.z, w.w);
      F z = sqrt((F)-2 * log((F)1 - u)) * cos((F)6.283185307179586 * u2);
      o[i] = (T)rint(a + b * z);
    } else {  /* uniform integers in [a, b) (a, b already integral) */
      ulong range = (ulong)(long)(b - a);
      ulong bits = ((ulong)w.x << 32) | (ulong)w.y;
      o[i] = (T)((long)a + (long)(bits % range));
    }
#else
    F r;
    if (kind == 2) {
      F u2 = unit(w.z, w.w);
      r = a + b * sqrt((F)-2 * log((F)1 - u)) * cos((F)6.283185307179586 * u2);
    } else {
      r = a + (b - a) * u;
    }
    T t = (T)r;
    if (kind != 2 && t >= (T)b) t = nextafter((T)b, (T)a);  /* rounding must not reach b */
    o[i] = t;
#endif
  }
}
"""

_KIND = {"default": 0, "uniform": 1, "normal": 2, "bernoulli": 3}


def seed_runtime(rt, seed: int) -> None:
    rt.rng = [seed & 0xFFFFFFFFFFFFFFFF, 0]


def _kernel(rt, dt):
    dt = np.dtype(dt)
    f64 = dt == np.float64 or (dt.kind in "iu" and rt.fp64)

    def render():
        head = f"typedef {ctype(dt)} T;\n"
        head += "typedef double F;\n#define F64\n" if f64 else "typedef float F;\n"
        if dt.kind in "iu":
            head += "#define INT_OUT\n"
        return head + _SRC

    return rt.kernel(("random", dt.str), "random", render), (np.float64 if f64 else np.float32)


def random_op(self, shape, distribution, device, dtype):
    import math

    rt = self._rt(device)
    dt = dtype.np
    out = ClArray.empty(rt, tuple(shape), dt)
    n = out.size
    if not n:
        return out
    if getattr(rt, "rng", None) is None:
        seed_runtime(rt, int.from_bytes(os.urandom(8), "little"))
    seed, count = rt.rng
    rt.rng[1] = count + 1
    kind = _KIND[distribution.kind]
    a, b = distribution.a, distribution.b
    if dt.kind in "iu" and kind in (0, 1):
        lo, hi = math.ceil(a), math.ceil(b)
        if hi <= lo:
            raise ValueError(f"int_random: no integer in [{a}, {b})")
        a, b = lo, hi
    k, fty = _kernel(rt, dt)
    u32 = np.uint32
    args = [out.buf, np.int32(n), u32(seed & 0xFFFFFFFF), u32(seed >> 32)]
    args += [u32(count & 0xFFFFFFFF), u32(count >> 32), np.int32(kind), fty(a), fty(b)]
    wg = rt.wg_flat if n >= rt.wg_flat else rt.wg
    rt.launch(k, ((n + wg - 1) // wg * wg,), (wg,), args)
    return out
