"""Counter-based random numbers, written once: Philox4x32-10 (Salmon et al. 2011, "Parallel
random numbers: as easy as 1, 2, 3") of (element index, call counter) under the seed.

One set of semantics for every runtime. Element i of the c-th random call of a device draws the
four 32-bit words `philox((i, c_lo, c_hi, 0), (seed_lo, seed_hi))` (i < 2^31: `n` is an int); no generator state
lives on the device, and the words are the same on every device and dialect. Then, by `kind`:
- 0 default / 1 uniform: `u` in [0, 1) from words 0 and 1 (24 bits for float, 53 for double,
  exactly scaled), `a + (b - a) * u`, kept below `b` after rounding to T;
- 2 normal: Box-Muller, `a + b * sqrt(-2 log(1 - u)) * cos(2 pi u2)` (u2 from words 2, 3);
- 3 bernoulli: `u < a` as 1 / 0 (dropout masks);
- a half output type (float16, bfloat16: storage only) computes in float32 and rounds once as it
  stores: the bits a float32 draw rounded to the half type has, for normal and bernoulli
  draws (uniform ones are drawn in float32 and clipped to the half type's bounds first, by
  the caller: rounding could reach `b`; `draw` refuses them);
- integer outputs: uniform integers in [a, b) (a, b integral) as `a + (w0:w1 % (b - a))`,
  normals rounded half to even.
Uniform values and integer draws use only integer arithmetic and exact scaling, so they match
bit for bit everywhere; normal values go through log/cos and match to the math library's rounding.

Kernel `philox_random(T* o, int n, uint s0, uint s1, uint c0, uint c1, int kind, F a, F b)`: one
element per item (no grid-stride loop: PoCL vectorises across a group's items).
`random_program(..., from_block=True)` renders `philox_random_at(T* o, int n, const U64* words,
uint delta, int kind, F a, F b)` instead: the seed is `words[0]` and the call `words[1] + delta`,
read from device memory (a captured step's draws: a replay writes the words anew, the recorded
launches keep their arguments), the same elements as `philox_random` with those words.

`dropout_program` renders `philox_dropout(S* o, S* m, const S* x, int n, <words>, F keep,
F scale)` (or `philox_dropout_at`): dropout in one pass, element i keeps x_i when the bernoulli
draw of `philox_random` with the same words (u < keep) does, `m_i = scale` (1 / keep rounded to
the storage type by the caller, as `mask * (1 / keep)` rounds it) or 0, and `o_i = x_i * m_i`
rounded once: the bits of the three ops it replaces (bernoulli draw, scale, multiply).
"""

from __future__ import annotations

from ._dialect import HALF, frame

KINDS = {"default": 0, "uniform": 1, "normal": 2, "bernoulli": 3}

_BODY = """
__DEV__void philox(unsigned int* c, unsigned int k0, unsigned int k1) {
  for (int r = 0; r < 10; ++r) {
    /* 64-bit products: the high words are mul_hi (vectorisable on CPUs) */
    U64 p0 = (U64)c[0] * 0xD2511F53u, p1 = (U64)c[2] * 0xCD9E8D57u;
    unsigned int n0 = (unsigned int)(p1 >> 32) ^ c[1] ^ k0;
    unsigned int n2 = (unsigned int)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0; c[1] = (unsigned int)p1; c[2] = n2; c[3] = (unsigned int)p0;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
}
/* u = 0 up to 1 - ulp, from two words: 24 bits for float, 53 for double, exactly scaled */
__DEV__F unit(unsigned int a, unsigned int b) {
#ifdef F64
  return (F)((((U64)(a >> 5)) << 26) | (U64)(b >> 6)) * (F)1.1102230246251565e-16;
#else
  return (F)(a >> 8) * (F)5.9604644775390625e-8;
#endif
}
__HEAD__S* o, const int n, __WORDS_ARGS__, const int kind, const F a, const F b) {
  const int i = __GID__;
  if (i >= n) return;__WORDS_READ__
  unsigned int w[4] = {(unsigned int)i, c0, c1, 0u};
  philox(w, s0, s1);
  const F u = unit(w[0], w[1]);
  if (kind == 3) { PUT(i, (T)(u < a ? 1 : 0)); return; }
#ifdef INT_OUT
  if (kind == 2) {
    const F z = sqrt((F)-2 * log((F)1 - u)) * cos((F)6.283185307179586 * unit(w[2], w[3]));
    PUT(i, (T)rint(a + b * z));
  } else {  /* uniform integers from a up to b - 1 (a, b already integral) */
    const U64 range = (U64)(I64)(b - a);
    const U64 bits = (((U64)w[0]) << 32) | (U64)w[1];
    PUT(i, (T)((I64)a + (I64)(bits % range)));
  }
#else
  F r;
  if (kind == 2) {
    r = a + b * sqrt((F)-2 * log((F)1 - u)) * cos((F)6.283185307179586 * unit(w[2], w[3]));
  } else {
    r = a + (b - a) * u;
  }
  T t = (T)r;
  if (kind != 2 && t >= (T)b) t = nextafter((T)b, (T)a);  /* rounding must not reach b */
  PUT(i, t);
#endif
}
"""


#: the (seed, call) words as four arguments (`philox_random`)
_ARGS = ("const unsigned int s0, const unsigned int s1,\n    const unsigned int c0, "
         "const unsigned int c1", "")  # fmt: skip
#: ... or read from device words: seed = words[0], call = words[1] + delta (`philox_random_at`)
_AT = (
    "__G__const U64* words, const unsigned int delta",
    """
  const U64 seed = words[0], call = words[1] + (U64)delta;
  const unsigned int s0 = (unsigned int)seed, s1 = (unsigned int)(seed >> 32);
  const unsigned int c0 = (unsigned int)call, c1 = (unsigned int)(call >> 32);""",
)


_DROPOUT = """
__HEAD__S* o, __G__S* m, __G__const S* x, const int n, __WORDS_ARGS__, const F keep,
    const F scale) {
  const int i = __GID__;
  if (i >= n) return;__WORDS_READ__
  unsigned int w[4] = {(unsigned int)i, c0, c1, 0u};
  philox(w, s0, s1);
  const F mv = unit(w[0], w[1]) < keep ? scale : (F)0;
  PUT(m, i, (T)mv);
  PUT(o, i, (T)((F)(LOAD(x, i)) * mv));
}
"""


def _head(fr, dtype: str, f64: bool) -> str:
    """Typedefs of a program writing `dtype`: T the value's type, S the buffer's (a half type:
    float values, 16-bit storage), F the arithmetic's, I64 / U64."""
    head = fr.pragma((["float64"] if f64 else []) + ([dtype] if dtype in HALF else []))
    head += f"typedef {fr.compute(dtype)} T;\ntypedef {fr.storage(dtype)} S;\n"
    head += f"typedef {'double' if f64 else 'float'} F;\n"
    head += f"typedef {fr.ct['int64']} I64;\ntypedef unsigned {fr.ct['int64']} U64;\n"
    return head + ("#define F64\n" if f64 else "")


def _words(body: str, fr, from_block: bool) -> str:
    args, read = _AT if from_block else _ARGS
    body = body.replace("__WORDS_ARGS__", args.replace("__G__", fr.gptr))
    return body.replace("__WORDS_READ__", read).replace("__G__", fr.gptr)


def dropout_program(dtype: str, dialect: str, from_block: bool = False) -> str:
    """The kernel `philox_dropout` (`from_block`: `philox_dropout_at`) for float `dtype` (a float
    or half dtype name) in `dialect` (see the module docstring)."""
    fr = frame(dialect)
    f64 = dtype == "float64"
    head = _head(fr, dtype, f64)
    head += f"#define PUT(p, i, v) ({fr.store(dtype, 'p', '(i)', '(v)')})\n"
    head += f"#define LOAD(p, i) ({fr.load(dtype, 'p', '(i)')})\n"
    body = _BODY[: _BODY.index("__HEAD__")] + _DROPOUT  # philox() and unit(), then the kernel
    body = body.replace("__DEV__", fr.dev).replace("__GID__", fr.gid)
    name = "philox_dropout_at" if from_block else "philox_dropout"
    body = _words(body, fr, from_block).replace("__HEAD__", fr.head(name) + f"{fr.gptr}")
    return head + body


def random_program(dtype: str, dialect: str, f64: bool = False, from_block: bool = False) -> str:
    """The kernel `philox_random` writing element type `dtype` (a float or int dtype name) in
    `dialect`; `f64`: compute in double (float64 outputs always; ints where the device has
    doubles, for the 53-bit scaling). `from_block`: the kernel `philox_random_at`, which reads
    the seed and the call from device words (see the module docstring)."""
    fr = frame(dialect)
    f64 = f64 or dtype == "float64"
    head = _head(fr, dtype, f64)
    head += f"#define PUT(i, v) ({fr.store(dtype, 'o', '(i)', '(v)')})\n"
    if not dtype.startswith("float") and dtype not in HALF:
        head += "#define INT_OUT\n"
    body = _BODY.replace("__DEV__", fr.dev).replace("__GID__", fr.gid)
    name = "philox_random_at" if from_block else "philox_random"
    body = _words(body, fr, from_block).replace("__HEAD__", fr.head(name) + f"{fr.gptr}")
    return head + body
