"""C helper functions the expression table calls (`{rem}`, `{div}`, `{pow}`, `{shl}`, `{shr}`),
one per element type, in either dialect.

Integer division by 0 (and MIN / -1) traps on CPUs, so they are defined as numpy defines them
(0, and a wrap); a float remainder takes the divisor's sign, a zero remainder the divisor's
sign too (numpy's `remainder`).
"""

from __future__ import annotations

import re

_FLOAT_REM = """{dev}{T} {name}({T} a, {T} b) {{
  {T} r = fmod(a, b);  /* the divisor's sign, as numpy */
  if (r != ({T})0) {{ if ((b < ({T})0) != (r < ({T})0)) r += b; }} else {{ r = copysign(({T})0, b); }}
  return r;
}}
"""
_INT = {
    "div": "{dev}{T} {name}({T} a, {T} b) {{ return b == 0 ? ({T})0 : {QUOT}; }}\n",
    "rem": """{dev}{T} {name}({T} a, {T} b) {{
  if (b == 0{MINUS1}) return ({T})0;
  {T} r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r;
}}
""",
    "shl": "{dev}{T} {name}({T} a, {T} b) {{ return (b < 0 || b >= {BITS}) ? ({T})0 : "
    "({T})(a << b); }}\n",
    "shr": "{dev}{T} {name}({T} a, {T} b) {{ return (b < 0 || b >= {BITS}) ? "
    "(a < 0 ? ({T})-1 : ({T})0) : ({T})(a >> b); }}\n",
    "pow": """{dev}{T} {name}({T} a, {T} b) {{
  if (b < 0) return a == 1 ? ({T})1 : (a == ({T})-1 ? ((b & 1) ? ({T})-1 : ({T})1) : ({T})0);
  {T} r = 1; while (b) {{ if (b & 1) r *= a; b >>= 1; if (b) a *= a; }} return r;
}}
""",
}
NAMES = ("rem", "div", "pow", "shl", "shr")
_BITS = {
    "int64": 64,
    "int32": 32,
    "int16": 16,
    "int8": 8,
    "uint8": 8,
    "uint16": 16,
    "uint32": 32,
    "uint64": 64,
}
_USE = re.compile(r"\{(" + "|".join(NAMES) + r")\}")


def used(expr: str) -> list:
    """The helper names `expr` calls."""
    return _USE.findall(expr)


def helper(which: str, dtype: str, ctype: str, cuda: bool) -> tuple[str, str]:
    """(function name, C source) of helper `which` for element type `dtype` (C type `ctype`)."""
    name = f"_{which}_{dtype}"  # by dtype name: the same in both dialects
    dev = "__device__ " if cuda else ""
    if dtype.startswith("float"):
        if which != "rem":
            raise ValueError(f"burn_gpu: no float helper {which!r}")
        return name, _FLOAT_REM.format(dev=dev, T=ctype, name=name)
    # a signed MIN / -1 overflows (traps on x86): -a wraps, the remainder is 0
    signed = dtype.startswith("int")
    quot = f"({ctype})(a / b)"
    if signed:
        quot = f"(b == ({ctype})-1 ? ({ctype})(-a) : {quot})"
    minus1 = f" || b == ({ctype})-1" if signed else ""
    src = _INT[which].format(
        dev=dev, T=ctype, name=name, QUOT=quot, MINUS1=minus1, BITS=_BITS[dtype]
    )
    return name, src
