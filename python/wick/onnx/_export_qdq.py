"""Quantized wick ops in ONNX's QDQ form.

Note [QDQ export]
ONNX says "this tensor is int8" with a pair of operators around ordinary float ones:
    DequantizeLinear(x_q, x_scale, x_zp) -> Conv / Gemm (float) -> QuantizeLinear(y, y_scale, y_zp)
and a runtime that has int8 kernels (ONNX Runtime's QDQ transformer) fuses each such group into
one integer operator (QLinearConv, QLinearMatMul). wick's quantized_conv2d and quantized_linear
(core/ops/quantized.h) are exactly such groups, requantization included, so each becomes:
  - DequantizeLinear of the uint8 input (per-tensor scale and zero point),
  - DequantizeLinear of the int8 weight along axis 0 (one scale per output channel, zero point 0),
  - the bias as int32 in units of input_scale * weight_scale[o], dequantized along axis 0: the form
    ONNX Runtime requires before it fuses the group (PyTorch's and ONNX Runtime's own quantizers
    write the same); rounding it moves the result by at most half a unit of that product,
  - Conv or Gemm, then Relu when the kernel clamps at the output zero point (the two agree: Q is
    monotonic and Q(0) is the zero point), then QuantizeLinear to uint8.
A runtime without the fusion computes the same group in float; either way the result is within
one quantization step of wick's (tests/python/test_onnx_export_qdq.py).
"""

import numpy as np

OPS = ("quantize_per_tensor", "dequantize", "quantized_linear", "quantized_conv2d")

_ZERO_POINT_DTYPES = {"uint8": np.uint8, "int8": np.int8}


def _zero_point(writer, value, dtype_name):
    if dtype_name not in _ZERO_POINT_DTYPES:
        raise ValueError(f"wick.onnx.export: a quantized tensor of dtype {dtype_name} (only "
                         "uint8 and int8 have an ONNX QDQ form)")
    return writer.constant(np.array(value, _ZERO_POINT_DTYPES[dtype_name]))


def _scale(writer, value):
    return writer.constant(np.array(value, np.float32))


def translate(writer, op, attrs, node, ins, outs):
    """Emits the QDQ nodes of one quantized kernel node through writer.emit / writer.constant."""
    values = writer.values
    if op == "quantize_per_tensor":
        dtype = values[node["outputs"][0]]["dtype"]
        writer.emit("QuantizeLinear", [ins[0], _scale(writer, attrs["scale"]),
                                       _zero_point(writer, attrs["zero_point"], dtype)], outs)
        return
    if op == "dequantize":
        dtype = values[node["params"][0]]["dtype"]
        writer.emit("DequantizeLinear", [ins[0], _scale(writer, attrs["scale"]),
                                         _zero_point(writer, attrs["zero_point"], dtype)], outs)
        return
    x, weight, weight_scale = ins[:3]
    bias_id = node["params"][3] if len(node["params"]) > 3 else -1
    base = outs[0]
    w_scale = writer.array(node["params"][2]).astype(np.float32)
    channels = w_scale.shape[0]
    x_float, w_float, y_float = f"{base}_x", f"{base}_w", f"{base}_y"
    writer.emit("DequantizeLinear", [x, _scale(writer, attrs["input_scale"]),
                                     _zero_point(writer, attrs["input_zero_point"], "uint8")],
                [x_float])
    writer.emit("DequantizeLinear", [weight, weight_scale,
                                     writer.constant(np.zeros(channels, np.int8))],
                [w_float], axis=0)
    float_ins = [x_float, w_float]
    if bias_id >= 0:
        # Note [QDQ export]: the bias in the accumulator's units, float32 as the kernel's m[o]
        bias_scale = np.float32(attrs["input_scale"]) * w_scale
        bias = writer.array(bias_id).astype(np.float32)
        bias_q = np.clip(np.rint(bias / bias_scale), -2**31, 2**31 - 1).astype(np.int32)
        b_float = f"{base}_b"
        writer.emit("DequantizeLinear", [writer.constant(bias_q), writer.constant(bias_scale),
                                         writer.constant(np.zeros(channels, np.int32))],
                    [b_float], axis=0)
        float_ins.append(b_float)
    if op == "quantized_linear":
        writer.emit("Gemm", float_ins, [y_float], transB=1)
    else:
        ph, pw = attrs["padding"]
        writer.emit("Conv", float_ins, [y_float], strides=attrs["stride"], pads=[ph, pw, ph, pw],
                    dilations=attrs["dilation"], group=attrs["groups"])
    if attrs["relu"]:
        writer.emit("Relu", [y_float], [f"{base}_relu"])
        y_float = f"{base}_relu"
    writer.emit("QuantizeLinear", [y_float, _scale(writer, attrs["output_scale"]),
                                   _zero_point(writer, attrs["output_zero_point"], "uint8")], outs)
