"""Constant 8-bit ONNX weights held as burn quantized tensors (issue 39, item 5).

Three import-time rules, used by the quantization, matmul and conv converters:

- `QWeight`: a `DequantizeLinear` of a constant int8 tensor whose zero point is absent or 0,
  with float32 scales. Burn's scheme (`QuantValue.Q8F`, symmetric, x = scale * q) expresses it
  exactly, so the weight becomes a quantized field of the module (the record stores the int8
  values and the scales, not floats). How the ONNX scale maps onto the scheme:
    - per tensor: `QuantLevel.TENSOR` with that scale;
    - blocks along the last axis of the layout the layer uses, the block size dividing it:
      `QuantLevel.block(bs)` with the ONNX scales;
    - one scale per output channel (per-axis on Linear's output column or Conv's output
      channel): the layer holds the integers with a unit per-tensor scale and its output is
      multiplied by the channel scales (exact algebra: the scale of a channel factors out of
      its dot products; the float result differs only by rounding order);
    - anything else (per-axis on another axis, blocks elsewhere): a unit-scale quantized
      Param dequantized and scaled per axis where the float value is read.
  A zero point != 0, uint8/int16/int32 inputs, float16 scales: not this rule (`reason_not`
  says why); `DequantizeLinear` then runs by float emulation (`ops.dequantize`), except int32
  constants (biases), which are folded to float32 at import (same size, and the layer gets
  its bias as a constant).

- `QAct`: a `DequantizeLinear` of a run-time 8-bit tensor with one scale and one zero point.
  A `MatMul`/`Gemm` of it and a `QWeight` runs on the integers (`qdq_matmul`, the backend's
  int8 `q_matmul`), so does a 2-D `Conv` whose weight layer holds a `QWeight` (`qdq_conv`,
  the backend's `qdq_conv2d` where it has one); any other reader gets its float value,
  written where it is read.

- `int8_param`: a constant 8-bit input of an integer op (MatMulInteger, QLinearMatMul,
  QLinearConv) as a unit-scale Q8F field: int8 kept as is, uint8 shifted by -128 with the
  shift moved into its zero point (q - zp == (q - 128) - (zp - 128)), so the integer
  arithmetic is unchanged and the backend's int8 kernels can read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto

from ._names import label

Q8 = (TensorProto.INT8, TensorProto.UINT8)


@dataclass
class QWeight:
    """A recognized `DequantizeLinear(const int8, const float32 scale)` (see module docstring)."""

    q: np.ndarray  # int8, the ONNX shape
    scale: np.ndarray  # float32, as ONNX gives it (one value, [C] per axis, or blocked)
    axis: int  # normalized
    block: int  # 0: per tensor / per axis
    source: str  # the ONNX name of the int8 initializer (comments name it)
    scale_name: str  # the ONNX name of the scales
    field: str | None = None  # the Param field once the float value was needed
    onnx_scale: bool = False  # the ONNX scales are applied after dequantizing (unit scale)

    @property
    def per_tensor(self) -> bool:
        return self.scale.size == 1

    def channel_scales(self, axis: int) -> np.ndarray | None:
        """The scales when they are one per index of `axis` (per-axis ONNX), else None."""
        if self.per_tensor or self.block or self.scale.ndim != 1 or self.axis != axis:
            return None
        return self.scale.astype(np.float32)


def expand(v: np.ndarray, axis: int, block: int, shape) -> np.ndarray:
    """A scale or zero point broadcast over a tensor of `shape` (ONNX: one value, one per index
    of `axis`, or one per block of `block` along `axis`)."""
    if v.size == 1:
        return v.reshape(())
    if not block:
        view = [1] * len(shape)
        view[axis] = -1
        return v.reshape(view)
    return np.take(np.repeat(v, block, axis), np.arange(shape[axis]), axis)


def value(qw: QWeight) -> np.ndarray:
    """The float32 value of a `QWeight`: q * scale in float64, one rounding (as at run time)."""
    s = expand(qw.scale.astype(np.float64), qw.axis, qw.block, qw.q.shape)
    return (qw.q.astype(np.float64) * s).astype(np.float32)


def _zero(zp: np.ndarray | None) -> bool:
    return zp is None or not np.any(zp)


def reason_not(ctx) -> str | None:
    """Why `DequantizeLinear` node `ctx` is not a `QWeight` (None when it is one)."""
    if not ctx.gen.quantized_fields:
        return "the Bincode record stores no quantized tensors"
    if ctx.elem(0) != TensorProto.INT8:
        return "input type not int8 (burn's 8-bit scheme is signed and symmetric)"
    if ctx.has(2) and ctx.const(2) is None:
        return "a zero point computed at run time"
    if not _zero(ctx.const(2) if ctx.has(2) else None):
        return "a zero point != 0 (burn's schemes are symmetric)"
    x, s = ctx.const(0), ctx.const(1)
    if x is None:
        return "a run-time input (only constant weights are held quantized)"
    if s is None or s.dtype != np.float32:
        return "scales not a float32 constant"
    if x.ndim == 0:
        return "a rank-0 value"
    return None


def qweight_of(ctx) -> QWeight | None:
    """The `QWeight` of a DequantizeLinear node, or None (`reason_not` says why)."""
    if not ctx.gen.quantized_fields or reason_not(ctx) is not None:
        return None
    x = ctx.const(0)
    axis = ctx.attr("axis", 1) % x.ndim
    block = ctx.attr("block_size", 0) or 0
    return QWeight(x, ctx.const(1), axis, int(block), ctx.node.input[0], ctx.node.input[1])


def quantized_data(q: np.ndarray, scales: np.ndarray, level=None, packed: bool = False):
    """`QuantizedData` of int8 `q` under Q8F: Burn's packed u32 store when `packed` (matmul
    operands: the GPU int8 and weight-only kernels read packed words) or when the last dim is
    a multiple of 4 (no padding), else one int8 per value (conv weights [.., 3] stay 1 byte a
    value)."""
    from burn_tensor.quantization import (
        QuantizedData,
        QuantLevel,
        QuantScheme,
        QuantStore,
        QuantValue,
        pack_ref,
    )

    store = QuantStore.PACKED_U32 if packed or q.shape[-1] % 4 == 0 else QuantStore.NATIVE
    scheme = QuantScheme(value=QuantValue.Q8F, level=level or QuantLevel.TENSOR, store=store)
    s = np.ascontiguousarray(scales, np.float32).reshape(scheme.params_shape(q.shape))
    return QuantizedData(pack_ref(q.astype(np.int64), scheme), s, scheme, q.shape)


UNIT = np.ones(1, np.float32)


def linear_layout(qw: QWeight, trans: bool):
    """(QuantizedData of the [K, N] weight, output channel scales [N] or None), or None when
    the scales fit neither rule. `trans`: the ONNX weight is [N, K] (Gemm's transB)."""
    if qw.q.ndim != 2:
        return None
    q = qw.q.T if trans else qw.q
    col = 0 if trans else 1  # the ONNX axis that becomes the output column
    if qw.per_tensor:
        return quantized_data(q, qw.scale.reshape(1), packed=True), None
    ch = qw.channel_scales(col)
    if ch is not None:
        return quantized_data(q, UNIT, packed=True), ch
    if qw.block and qw.axis == col and q.shape[1] % qw.block == 0:
        from burn_tensor.quantization import QuantLevel

        s = qw.scale.T if trans else qw.scale
        return quantized_data(q, s, QuantLevel.block(qw.block), packed=True), None
    return None


def conv_layout(qw: QWeight):
    """(QuantizedData of the conv weight, output channel scales or None), or None."""
    if qw.per_tensor:
        return quantized_data(qw.q, qw.scale.reshape(1)), None
    ch = qw.channel_scales(0)
    if ch is not None:
        return quantized_data(qw.q, UNIT), ch
    return None


def float_expr(gen, qw: QWeight, elem: int) -> str:
    """Python expression of the dequantized value in `elem` (the field is made on first use)."""
    from ._types import dtype_code

    if qw.field is None:
        level, scale, onnx_scale = _param_scheme(qw)
        data = quantized_data(qw.q, scale, level)
        qw.field = gen.add_field(
            "qconstant",
            "Param",
            f"ops.param({list(qw.q.shape)}, DType.F32, device, trainable=False)",
            data,
            f"int8 initializer {label(qw.source)}, quantized",
        )
        qw.onnx_scale = onnx_scale
    s = gen.materialize(qw.scale_name) if qw.onnx_scale else "None"
    return (
        f"ops.dequantize_weight(self.{qw.field}.val(), {s}, {qw.axis}, {qw.block}, "
        f"{qw.q.ndim}, {dtype_code(elem)})"
    )


def _param_scheme(qw: QWeight):
    """(level, scales stored, whether the ONNX scale is applied after dequantizing)."""
    from burn_tensor.quantization import QuantLevel

    if qw.per_tensor:
        return None, qw.scale.reshape(1), False
    last = qw.q.ndim - 1
    if qw.block and qw.axis == last and qw.q.shape[last] % qw.block == 0:
        return QuantLevel.block(qw.block), qw.scale, False
    return None, UNIT, True


def int8_param(ctx, i: int, zp_i: int):
    """(expression of input i as a unit-scale quantized tensor, expression of its zero point,
    the int8 values) when input i is a constant 8-bit tensor (see module docstring), else None."""
    x = ctx.const(i)
    if not ctx.gen.quantized_fields or x is None or x.dtype not in (np.int8, np.uint8) or x.ndim == 0:
        return None
    zp = ctx.const(zp_i) if ctx.has(zp_i) else None
    if ctx.has(zp_i) and zp is None:
        return None
    shift = 128 if x.dtype == np.uint8 else 0
    q = (x.astype(np.int16) - shift).astype(np.int8)
    gen = ctx.gen
    name = gen.add_field(
        "qconstant",
        "Param",
        f"ops.param({list(x.shape)}, DType.F32, device, trainable=False)",
        quantized_data(q, UNIT, packed=x.ndim == 2),
        f"{x.dtype} initializer {label(ctx.node.input[i])}, quantized",
    )
    zexpr = "None"
    if shift or zp is not None:
        z = (np.zeros(1, np.int32) if zp is None else zp.astype(np.int32)) - shift
        zexpr = gen.materialize(new_const(gen, f"{ctx.node.input[i]}_zp_int8", z))
    return f"self.{name}.val()", zexpr, q


def new_const(gen, base: str, value: np.ndarray) -> str:
    """Register an import-time constant under a name no model value has; returns the name."""
    name, k = base, 1
    while name in gen.consts or name in gen.types or name in gen.vars:
        k += 1
        name = f"{base}_{k}"
    gen.consts[name] = value
    return name


@dataclass
class QAct:
    """A DequantizeLinear of a run-time 8-bit tensor with one float32 scale and one zero point
    (expressions of the code already written for them), and its float emulation."""

    q: str
    scale: str
    zp: str
    float_expr: str
    why: str


def qact_of(ctx, float_expr: str, why: str) -> QAct | None:
    """The `QAct` of DequantizeLinear node `ctx`, or None when it is not one."""
    if not ctx.gen.quantized_fields or ctx.const(0) is not None:
        return None
    if ctx.elem(0) not in Q8 or ctx.out_elem(0) != TensorProto.FLOAT:
        return None
    s = ctx.const(1)
    zp = ctx.const(2) if ctx.has(2) else None
    if s is None or s.size != 1 or s.dtype != np.float32 or (ctx.has(2) and (zp is None or zp.size != 1)):
        return None
    return QAct(ctx.x(0), ctx.x(1), ctx.x(2) if ctx.has(2) else "None", float_expr, why)


def qdq_matmul(ctx, qa: QAct, qw: QWeight, trans: bool, bias: bool) -> bool:
    """Write DequantizeLinear(activation) @ DequantizeLinear(int8 weight) (+ bias) as
    `ops.qdq_matmul`: the integer product on the backend's int8 `q_matmul` (`int_matmul`), then
    the two scales. The weight is a unit-scale int8 field; its scales (one, or one per output
    column) multiply the result. False when the weight's scales are neither."""
    if qw.q.ndim != 2 or qw.block:
        return False
    q = qw.q.T if trans else qw.q
    if not qw.per_tensor and qw.channel_scales(0 if trans else 1) is None:
        return False
    gen = ctx.gen
    name = gen.add_field(
        "qconstant",
        "Param",
        f"ops.param({list(q.shape)}, DType.F32, device, trainable=False)",
        quantized_data(q, UNIT, packed=True),
        f"int8 initializer {label(qw.source)}, quantized",
    )
    sums = gen.materialize(new_const(gen, f"{qw.source}_colsum", q.astype(np.int32).sum(0).astype(np.int32)))
    b = ctx.x(2) if bias else "None"
    ctx.set(
        0,
        f"ops.qdq_matmul({qa.q}, {qa.zp}, {qa.scale}, self.{name}.val(), "
        f"{gen.materialize(qw.scale_name)}, {b}, {ctx.rank(0)}, {sums})",
    )
    return True


def qdq_conv(ctx, qa: QAct, layer: str, qw: QWeight | None) -> None:
    """Write Conv(DequantizeLinear(activation), layer `layer`'s quantized weight) as
    `ops.qdq_conv` (`_rt_qconv`: the integer conv where the backend has one). `qw`: the weight
    when the layer holds a unit scale (per-channel ONNX scales, then the bias, after it).
    When a QuantizeLinear is the output's only reader (`_only_quantize`), the call is left to
    that node, which adds its scale and zero point: the conv then writes the 8-bit output."""
    extra = ""
    if qw is not None:
        extra = f", channel_scales={ctx.gen.materialize(qw.scale_name)}"
        if ctx.has(2):
            extra += f", bias={ctx.x(2)}"
    call = f"ops.qdq_conv(self.{layer}, {qa.q}, {qa.zp}, {qa.scale}{extra}"
    if _only_quantize(ctx):
        ctx.gen.fused_quantize[ctx.node.output[0]] = call
        return
    ctx.set(0, call + ")")


def _only_quantize(ctx) -> bool:
    """Whether the node's output is read by one node of the main graph, a QuantizeLinear to
    uint8 / int8 with a one-element float32 scale and a zero point, all constants (and by no
    subgraph, and is no graph output)."""
    import onnx

    g, out = ctx.gen.model.graph, ctx.node.output[0]
    if out in {o.name for o in g.output} or not any(out in n.output for n in g.node):
        return False
    graphs = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    if any(a.type in graphs for n in g.node for a in n.attribute):
        return False
    readers = [n for n in g.node if out in n.input]
    if len(readers) != 1 or readers[0].op_type != "QuantizeLinear" or readers[0].domain not in ("", "ai.onnx"):
        return False
    q = readers[0]
    if len(q.input) != 3 or q.input[0] != out or any(a.name in ("precision", "block_size") for a in q.attribute):
        return False
    s, z = ctx.gen.consts.get(q.input[1]), ctx.gen.consts.get(q.input[2])
    return (
        s is not None and s.dtype == np.float32 and s.size == 1
        and z is not None and z.dtype in (np.uint8, np.int8) and z.size == 1
    )  # fmt: skip


def fused_quantize(ctx) -> bool:
    """QuantizeLinear of a conv output left to it by `qdq_conv`: the conv call completed with
    this node's scale and zero point (its type: the output's). False when not such a node."""
    call = ctx.gen.fused_quantize.pop(ctx.node.input[0], None)
    if call is None:
        return False
    ctx.set(0, f"{call}, out_scale={ctx.x(1)}, out_zero_point={ctx.x(2)})")
    return True
