"""Rewrites of onnxruntime's quantized contrib ops (QOperator-format static quantization,
dynamic quantization and 4-bit weight-only matmuls) into default-domain quantize/dequantize
graphs, which the importer already runs (`_ops_quant.py`).

`QLinear<Op>(x, x_scale, x_zp, ..., y_scale, y_zp)` is DequantizeLinear on each input, the float
op, QuantizeLinear on the output: onnxruntime's own definition of these ops, which compute in
float and requantize once (results can differ from its fused int8 kernels by one LSB on ties,
as its two execution modes differ from each other).
"""

from __future__ import annotations

import numpy as np

from ._contrib import Builder, contrib


def _dq(b: Builder, x: str, scale: str, zp: str) -> str:
    return b.add("DequantizeLinear", [x, scale] + ([zp] if zp else []))


def _q(b: Builder, x: str, scale: str, zp: str, out: str) -> str:
    return b.add("QuantizeLinear", [x, scale] + ([zp] if zp else []), out)


def _binary(op: str):
    def rewrite(b: Builder) -> None:
        a = _dq(b, b.inp(0), b.inp(1), b.inp(2))
        c = _dq(b, b.inp(3), b.inp(4), b.inp(5))
        _q(b, b.add(op, [a, c]), b.inp(6), b.inp(7), b.out(0))

    return rewrite


contrib("QLinearAdd")(_binary("Add"))
contrib("QLinearMul")(_binary("Mul"))


@contrib("QLinearConcat")
def qlinear_concat(b: Builder) -> None:
    """Inputs: y_scale, y_zp, then (x, x_scale, x_zp) per concatenated tensor."""
    rest = list(b.node.input[2:])
    if not rest or len(rest) % 3:
        b.fail(f"{len(rest)} inputs after y_scale, y_zp; triplets (x, scale, zero point) expected")
    xs = [_dq(b, rest[i], rest[i + 1], rest[i + 2]) for i in range(0, len(rest), 3)]
    _q(b, b.add("Concat", xs, axis=int(b.attr("axis", 0))), b.inp(0), b.inp(1), b.out(0))


def _unary(op: str, attrs: tuple[str, ...] = ()):
    def rewrite(b: Builder) -> None:
        b.refuse_attrs(channels_last=(0,))
        kw = {k: b.attrs[k] for k in attrs if k in b.attrs}
        x = _dq(b, b.inp(0), b.inp(1), b.inp(2))
        _q(b, b.add(op, [x], **kw), b.inp(3), b.inp(4), b.out(0))

    return rewrite


POOL = ("auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides")
contrib("QLinearAveragePool")(_unary("AveragePool", POOL))
contrib("QLinearGlobalAveragePool")(_unary("GlobalAveragePool"))
contrib("QLinearSigmoid")(_unary("Sigmoid"))
contrib("QLinearLeakyRelu")(_unary("LeakyRelu", ("alpha",)))


@contrib("QLinearSoftmax")
def qlinear_softmax(b: Builder) -> None:
    b.refuse_attrs(opset=(13,))
    x = _dq(b, b.inp(0), b.inp(1), b.inp(2))
    _q(b, b.add("Softmax", [x], axis=int(b.attr("axis", -1))), b.inp(3), b.inp(4), b.out(0))


@contrib("QGemm")
def qgemm(b: Builder) -> None:
    """Gemm over dequantized A and B (B per tensor or per output column), the int32 bias C at
    scale a_scale * b_scale; quantized to (y_scale, y_zp) when given, float otherwise."""
    trans_b = int(b.attr("transB", 0))
    a = _dq(b, b.inp(0), b.inp(1), b.inp(2))
    b_scale = b.consts.get(b.inp(4))
    axis = {} if b_scale is None or b_scale.size == 1 else {"axis": 0 if trans_b else 1}
    w = b.add("DequantizeLinear", [b.inp(3), b.inp(4)] + ([b.inp(5)] if b.inp(5) else []), **axis)
    ins = [a, w]
    if b.inp(6):
        scale = b.add("Mul", [b.inp(1), b.inp(4)])
        ins.append(b.add("Mul", [b.add("Cast", [b.inp(6)], to=1), scale]))
    g = {k: b.attrs[k] for k in ("alpha", "transA", "transB") if k in b.attrs}
    y = b.add("Gemm", ins, None if b.inp(7) else b.out(0), **g)
    if b.inp(7):
        _q(b, y, b.inp(7), b.inp(8), b.out(0))


@contrib("DynamicQuantizeMatMul")
def dynamic_quantize_matmul(b: Builder) -> None:
    """A (float) quantized per tensor to uint8 at run time, times the int8/uint8 B with its
    scale and zero point, in int32, scaled back to float (+ bias)."""
    aq = b.tmp("a_q")
    a_scale, a_zp = b.tmp("a_scale"), b.tmp("a_zp")
    b.nodes.append(_node("DynamicQuantizeLinear", [b.inp(0)], [aq, a_scale, a_zp], b.tmp("DQL")))
    mm = b.add("MatMulInteger", [aq, b.inp(1), a_zp] + ([b.inp(3)] if b.inp(3) else []))
    y = b.add("Mul", [b.add("Mul", [b.add("Cast", [mm], to=1), a_scale]), b.inp(2)])
    if b.inp(4):
        b.add("Add", [y, b.inp(4)], b.out(0))
    else:
        b.add("Identity", [y], b.out(0))


def _node(op, ins, outs, name):
    from onnx import helper

    return helper.make_node(op, ins, outs, name=name)


def unpack_nbits(
    packed: np.ndarray, scales: np.ndarray, zeros: np.ndarray | None, k: int, n: int, bits: int, block: int
) -> np.ndarray:
    """MatMulNBits' weight as float [K, N]: column n's block j holds `block` values of `bits`
    bits packed low bits first, value = (q - zero) * scale; zeros default to 2^(bits-1) and come
    packed the same way per column (or as floats, used as given)."""
    if bits not in (2, 4, 8) or block < 16 or block & (block - 1):
        raise ValueError(f"bits={bits}, block_size={block} (bits 2/4/8, block a power of 2 >= 16)")
    n_blocks = -(-k // block)
    per_byte = 8 // bits
    blob = block // per_byte
    if packed.shape != (n, n_blocks, blob) or packed.dtype != np.uint8:
        raise ValueError(f"packed weight {packed.dtype}{list(packed.shape)}; uint8{[n, n_blocks, blob]} expected")
    mask = (1 << bits) - 1
    shifts = (np.arange(per_byte) * bits).astype(np.uint8)
    q = ((packed[..., None] >> shifts) & mask).reshape(n, n_blocks, block).astype(np.float32)
    if scales.size != n * n_blocks:
        raise ValueError(f"scales hold {scales.size} values; {n * n_blocks} expected")
    s = scales.reshape(n, n_blocks, 1).astype(np.float32)
    if zeros is None:
        z = np.float32(1 << (bits - 1))
    elif zeros.dtype == np.uint8:
        zb = -(-n_blocks // per_byte)
        if zeros.size != n * zb:
            raise ValueError(f"packed zero points hold {zeros.size} bytes; {n * zb} expected")
        zq = (zeros.reshape(n, zb)[..., None] >> shifts) & mask
        z = zq.reshape(n, zb * per_byte)[:, :n_blocks, None].astype(np.float32)
    else:
        if zeros.size != n * n_blocks:
            raise ValueError(f"zero points hold {zeros.size} values; {n * n_blocks} expected")
        z = zeros.reshape(n, n_blocks, 1).astype(np.float32)
    w = ((q - z) * s).reshape(n, n_blocks * block)[:, :k]
    return np.ascontiguousarray(w.T)


@contrib("MatMulNBits")
def matmul_nbits(b: Builder) -> None:
    """A [..., K] @ W [K, N] (+ bias), W stored as `bits`-bit blocks with per-block scales. The
    weight must be an initializer; it is unpacked to float at import (quantized kernels that read
    the packed form are the quantization issue's)."""
    if b.inp(4):
        b.fail("input 4 (g_idx: act-order group indices) is not supported")
    packed, scales = b.consts.get(b.inp(1)), b.consts.get(b.inp(2))
    zeros = b.consts.get(b.inp(3)) if b.inp(3) else None
    if packed is None or scales is None or (b.inp(3) and zeros is None):
        b.fail("the packed weight, scales and zero points must be initializers")
    k, n = int(b.attr("K", 0)), int(b.attr("N", 0))
    if k <= 0 or n <= 0:
        b.fail(f"attributes K={k}, N={n}: both must be positive")
    try:
        w = unpack_nbits(packed, scales, zeros, k, n, int(b.attr("bits", 4)), int(b.attr("block_size", 0)))
    except ValueError as err:
        b.fail(str(err))
    y = b.add("MatMul", [b.inp(0), b.const(w, hint="weight")], None if b.inp(5) else b.out(0))
    if b.inp(5):
        b.add("Add", [y, b.inp(5)], b.out(0))
