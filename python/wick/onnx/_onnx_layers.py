"""How ONNX's layer operators run as wick ops: Conv, the pools, Pad, BatchNormalization, MatMul,
Gemm, QuantizeLinear and DequantizeLinear (the rest, and the value conventions, are in
_onnx_ops.py).

Note [ONNX padding]
ONNX gives each spatial dimension its own begin and end padding, and auto_pad SAME_* derives them
from the input size; wick's (and PyTorch's) layers take one symmetric padding per dimension. Equal
pads go to the layer; unequal pads are applied first with F.pad (zeros for Conv and AveragePool,
-inf for MaxPool) and the layer runs unpadded. So are pads wider than half the kernel, which ONNX
allows (ONNX Runtime up to kernel - 1) and wick's layers refuse. AveragePool with
count_include_pad=0 cannot be padded that way (the padded zeros would be counted): unequal or
wide pads with it are refused, at load time where the pads are attributes.
"""

import math

import numpy as np

import wick
import wick.nn.functional as F

from ._onnx_ops import (axis_in, bad_attribute, check_flags, check_size, is_static, reshape_to,
                        shape_of, static, static_ints, to_wick)


def _pads(node, x_dims, kernel, strides, dilations):
    """ONNX's pads as (begin, end) lists over the spatial dims, auto_pad resolved from the input
    shape (known while running, and frozen per signature under wick.compile)."""
    n = len(kernel)
    auto = node.attrs.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", "VALID"):
        pads = node.attrs.get("pads", [0] * (2 * n)) if auto == "NOTSET" else [0] * (2 * n)
        if len(pads) != 2 * n:
            raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): pads {pads} should "
                             f"have {2 * n} entries")
        return list(pads[:n]), list(pads[n:])
    begin, end = [], []
    for size, k, s, d in zip(x_dims[2:], kernel, strides, dilations):
        total = max(0, (math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size)
        small = total // 2
        begin.append(small if auto == "SAME_UPPER" else total - small)
        end.append(total - begin[-1])
    return begin, end


def _spatial(node, x, kernel):
    n = len(kernel)
    dims = list(x.shape)
    if len(dims) != n + 2 or n not in (1, 2):
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): wick runs 1-D and 2-D "
                         f"{node.op} on [N, C, ...] inputs; got input shape {dims} and kernel "
                         f"{kernel}")
    strides = node.attrs.get("strides", [1] * n)
    dilations = node.attrs.get("dilations", [1] * n)
    if len(strides) != n or len(dilations) != n:
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): strides {strides} and "
                         f"dilations {dilations} should have {n} entries, one per spatial "
                         "dimension")
    begin, end = _pads(node, dims, kernel, strides, dilations)
    check_size(node, dims[:2] + [d + b + e for d, b, e in zip(dims[2:], begin, end)],
               x.dtype.itemsize)
    return strides, dilations, begin, end


def _wide(kernel, begin, end):
    """Pads wick's pooling layers refuse: more than half the kernel."""
    return any(p > k // 2 for k, b, e in zip(kernel, begin, end) for p in (b, e))


def _ceil_trim(node, y, dims, kernel, strides, dilations, begin, end):
    """y pooled with ceil_mode from an explicitly padded input, cut to ONNX's size: the last
    window must start inside the input or its begin padding, and on the padded input, whose end
    padding has become input, wick would keep a window that starts there."""
    if not node.attrs.get("ceil_mode", 0):
        return y
    sizes = []
    for size, k, s, d, b, e in zip(dims[2:], kernel, strides, dilations, begin, end):
        n = -(-(size + b + e - d * (k - 1) - 1) // s) + 1
        sizes.append(n - 1 if (n - 1) * s >= size + b else n)
    return y[(slice(None), slice(None)) + tuple(slice(0, n) for n in sizes)]


def _pad_explicitly(x, begin, end, value=0.0):
    pad = []
    for b, e in zip(reversed(begin), reversed(end)):
        pad += [b, e]
    return F.pad(x, pad, "constant", value)


def conv(node, ins):
    x, w, b = to_wick(ins[0]), to_wick(ins[1]), to_wick(ins[2] if len(ins) > 2 else None)
    kernel = node.attrs.get("kernel_shape", list(w.shape[2:]))
    if list(kernel) != list(w.shape[2:]):
        raise ValueError(f"wick.onnx: node '{node.name}' (Conv): kernel_shape {kernel} does not "
                         f"match the weight's shape {list(w.shape)}")
    strides, dilations, begin, end = _spatial(node, x, kernel)
    # Many output channels over a large input multiply two sizes that each fit.
    out = [max((d + b + e - dl * (k - 1) - 1) // s + 1, 0) for d, b, e, dl, k, s in
           zip(x.shape[2:], begin, end, dilations, kernel, strides)]
    check_size(node, [x.shape[0], w.shape[0]] + out, x.dtype.itemsize)
    if begin != end:  # asymmetric padding: pad first, then convolve with none
        x, begin = _pad_explicitly(x, begin, end), [0] * len(begin)
    groups = node.attrs.get("group", 1)
    if len(kernel) == 1:
        return [F.conv1d(x, w, b, strides[0], begin[0], dilations[0], groups)]
    return [F.conv2d(x, w, b, strides, begin, dilations, groups)]


def max_pool(node, ins):
    x = to_wick(ins[0])
    kernel = node.attrs["kernel_shape"]
    strides, dilations, begin, end = _spatial(node, x, kernel)
    ceil = bool(node.attrs.get("ceil_mode", 0))
    if begin != end or _wide(kernel, begin, end):
        padded = _pad_explicitly(x, begin, end, -math.inf)
        n = [0] * len(kernel)
        y = (F.max_pool1d(padded, kernel[0], strides[0], 0, dilations[0], ceil)
             if len(kernel) == 1 else F.max_pool2d(padded, kernel, strides, n, dilations, ceil))
        return [_ceil_trim(node, y, list(x.shape), kernel, strides, dilations, begin, end)]
    if len(kernel) == 1:
        return [F.max_pool1d(x, kernel[0], strides[0], begin[0], dilations[0], ceil)]
    return [F.max_pool2d(x, kernel, strides, begin, dilations, ceil)]


def average_pool(node, ins):
    x = to_wick(ins[0])
    kernel = node.attrs["kernel_shape"]
    strides, dilations, begin, end = _spatial(node, x, kernel)
    ceil = bool(node.attrs.get("ceil_mode", 0))
    include = bool(node.attrs.get("count_include_pad", 0))
    if any(d != 1 for d in dilations):
        raise ValueError(f"wick.onnx: node '{node.name}' (AveragePool): dilations {dilations} "
                         "are not supported")
    if begin != end or _wide(kernel, begin, end):
        if not include:  # SAME_* pads, known only now (Note [ONNX padding])
            _refuse_pads(node, begin + end, kernel)
        padded = _pad_explicitly(x, begin, end)
        y = (F.avg_pool1d(padded, kernel[0], strides[0], 0, ceil, True) if len(kernel) == 1 else
             F.avg_pool2d(padded, kernel, strides, [0] * len(kernel), ceil, True))
        return [_ceil_trim(node, y, list(x.shape), kernel, strides, dilations, begin, end)]
    if len(kernel) == 1:
        return [F.avg_pool1d(x, kernel[0], strides[0], begin[0], ceil, include)]
    return [F.avg_pool2d(x, kernel, strides, begin, ceil, include)]


def _refuse_pads(node, pads, kernel):
    raise NotImplementedError(f"wick.onnx: node '{node.name}' (AveragePool): pads {pads} with "
                              f"count_include_pad=0 are not supported; wick pools with pads that "
                              f"are equal on both sides and at most half the kernel {kernel}")


def global_pool(node, ins):
    x = to_wick(ins[0])
    dims = tuple(range(2, len(x.shape)))
    if node.op == "GlobalAveragePool":
        return [x.mean(dims, keepdim=True)]
    return [x.amax(dims, keepdim=True)]


def pad(node, ins):
    x = ins[0]
    rank = len(shape_of(x))
    mode = node.attrs.get("mode", "constant")
    if node.opset < 11:
        pads, value, axes = node.attrs.get("pads", []), node.attrs.get("value", 0.0), None
    else:
        pads = static_ints(node, ins[1], "pads")
        value = static(node, ins[2], "constant_value") if len(ins) > 2 else None
        value = 0.0 if value is None or value.size == 0 else float(value.reshape(-1)[0])
        axes = static_ints(node, ins[3], "axes") if len(ins) > 3 else None
    axes = list(range(rank)) if axes is None else [axis_in(node, a, rank) for a in axes]
    if len(pads) != 2 * len(axes) or any(p < 0 for p in pads):
        raise ValueError(f"wick.onnx: node '{node.name}' (Pad): pads {pads} must be "
                         f"{2 * len(axes)} non-negative numbers")
    begin, end = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        begin[a], end[a] = pads[i], pads[i + len(axes)]
    check_size(node, [d + b + e for d, b, e in zip(shape_of(x), begin, end)], x.dtype.itemsize)
    first = next((a for a in range(rank) if begin[a] or end[a]), rank)
    if first == rank:
        return [x]
    wick_mode = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}[mode]
    out = F.pad(to_wick(x), [p for a in reversed(range(first, rank)) for p in (begin[a], end[a])],
                wick_mode, value)
    return [out]


def batch_norm(node, ins):
    x, scale, bias, mean, var = (to_wick(v) for v in ins[:5])
    return [F.batch_norm(x, mean, var, scale, bias, False, 0.1, node.attrs.get("epsilon", 1e-5))]


def matmul(node, ins):
    a, b = to_wick(ins[0]), to_wick(ins[1])
    if len(a.shape) >= 2 and len(b.shape) >= 2:  # [n, 1] @ [1, m] is n * m elements
        batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
        check_size(node, list(batch) + [a.shape[-2], b.shape[-1]], a.dtype.itemsize)
    return [wick.matmul(a, b)]


def gemm(node, ins):
    a, b = to_wick(ins[0]), to_wick(ins[1])
    c = to_wick(ins[2]) if len(ins) > 2 else None
    alpha, beta = node.attrs.get("alpha", 1.0), node.attrs.get("beta", 1.0)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise ValueError(f"wick.onnx: node '{node.name}' (Gemm): A and B must be 2-D; got "
                         f"{list(a.shape)} and {list(b.shape)}")
    a = a.t() if node.attrs.get("transA", 0) else a
    check_size(node, [a.shape[0], b.shape[0 if node.attrs.get("transB", 0) else 1]],
               a.dtype.itemsize)
    if node.attrs.get("transB", 0) and alpha == 1.0 and beta == 1.0 and (
            c is None or list(c.shape) == [b.shape[0]]):
        return [F.linear(a, b, c)]  # PyTorch's nn.Linear: y = a @ b^T + c, b as stored
    b = b.t() if node.attrs.get("transB", 0) else b
    y = wick.matmul(a, b)
    if alpha != 1.0:
        y = y * alpha
    if c is not None and beta != 0.0:
        y = y + (c * beta if beta != 1.0 else c)
    return [y]


# ---- quantization (Note [QDQ in float]) ----
# QuantizeLinear and DequantizeLinear run in float32: y = saturate(round_half_even(x / scale) +
# zero_point) holds integers in a float tensor, and DequantizeLinear computes (y - zero_point) *
# scale. Every integer of int8/uint8 is exact in float32, so this is the integer arithmetic ONNX
# Runtime does; a quantized value leaves the graph as its ONNX type (uint8, or int8 where wick has
# it). Static inputs (quantized weights) fold in NumPy.

_QRANGE = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127)}


def _per_axis(node, v, dims, what, scale=None):
    """scale / zero_point broadcast along `axis` (per-channel), or as scalars. ONNX allows a
    scalar (or one element) and a 1-D tensor of the axis's length; a zero point has its scale's
    shape. Anything else is refused here, before NumPy or wick broadcast it."""
    if v is None:
        return None
    rank = len(dims)
    if scale is not None and list(v.shape) != list(scale.shape):
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): {what} has shape "
                         f"{list(v.shape)}, its scale {list(scale.shape)}; ONNX needs the same")
    if len(v.shape) == 0 or (len(v.shape) == 1 and v.shape[0] == 1 and rank != 1):
        return v if len(v.shape) == 0 else reshape_to(v, [])
    axis = axis_in(node, node.attrs.get("axis", 1), rank)
    if len(v.shape) != 1 or v.shape[0] != dims[axis]:
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): {what} of shape "
                         f"{list(v.shape)} is neither a scalar nor one value per entry of axis "
                         f"{axis} of the input's shape {dims}")
    shape = [1] * rank
    shape[axis] = v.shape[0]
    return reshape_to(v, shape)


def quantize_linear(node, ins):
    x, scale = ins[0], static(node, ins[1], "y_scale")
    zp = static(node, ins[2], "y_zero_point") if len(ins) > 2 and ins[2] is not None else None
    # The type: the zero point's, else opset 21's output_dtype (3 is INT8), else uint8.
    qtype = zp.dtype if zp is not None else np.dtype(
        np.int8 if node.attrs.get("output_dtype", 0) == 3 else np.uint8)
    if qtype not in _QRANGE:
        raise ValueError(f"wick.onnx: node '{node.name}' (QuantizeLinear): zero point type "
                         f"{qtype} is not supported (uint8 and int8 are)")
    lo, hi = _QRANGE[qtype]
    dims = shape_of(x)
    scalef = _per_axis(node, scale.astype(np.float32), dims, "y_scale")
    zpf = _per_axis(node, (zp if zp is not None else np.zeros(scale.shape, qtype)).astype(
        np.float32), dims, "y_zero_point", scale)
    scale = scalef
    if is_static(x):
        return [np.clip(np.rint(x.astype(np.float32) / scale) + zpf, lo, hi).astype(qtype)]
    y = (to_wick(x).float() / to_wick(scale)).round() + to_wick(zpf)
    return [y.clamp(float(lo), float(hi))]


def dequantize_linear(node, ins):
    x, scale = ins[0], static(node, ins[1], "x_scale")
    zp = static(node, ins[2], "x_zero_point") if len(ins) > 2 and ins[2] is not None else None
    check_size(node, shape_of(x), 4, is_static(x))  # uint8 in, float32 out: four times the bytes
    dims = shape_of(x)
    scalef = _per_axis(node, scale.astype(np.float32), dims, "x_scale")
    zpf = None if zp is None else _per_axis(node, zp.astype(np.float32), dims, "x_zero_point",
                                            scale)
    scale = scalef
    if is_static(x):
        xf = x.astype(np.float32)
        return [((xf - zpf if zpf is not None else xf) * scale).astype(np.float32)]
    xf = x.float()
    if zpf is not None:
        xf = xf - to_wick(zpf)
    return [xf * to_wick(scale)]


OPS = {
    "Conv": conv, "MaxPool": max_pool, "AveragePool": average_pool, "Pad": pad,
    "GlobalAveragePool": global_pool, "GlobalMaxPool": global_pool,
    "BatchNormalization": batch_norm, "MatMul": matmul, "Gemm": gemm,
    "QuantizeLinear": quantize_linear, "DequantizeLinear": dequantize_linear,
}


# ---- load-time checks of attribute values ----

def _check_spatial(node):
    auto = node.attrs.get("auto_pad", "NOTSET")
    if auto not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        bad_attribute(node, "auto_pad", auto,
                      "ONNX defines NOTSET, VALID, SAME_UPPER and SAME_LOWER")
    for name in ("strides", "dilations", "kernel_shape"):
        if any(v < 1 for v in node.attrs.get(name, [])):
            bad_attribute(node, name, node.attrs[name], "every entry must be >= 1")
    if node.attrs.get("group", 1) < 1:
        bad_attribute(node, "group", node.attrs["group"], "it must be >= 1")
    if any(v < 0 for v in node.attrs.get("pads", [])):
        bad_attribute(node, "pads", node.attrs["pads"], "negative pads are not supported")
    if node.op in ("MaxPool", "AveragePool") and "kernel_shape" not in node.attrs:
        bad_attribute(node, "kernel_shape", None, "it is required")
    if node.attrs.get("storage_order", 0) != 0:
        bad_attribute(node, "storage_order", node.attrs["storage_order"],
                      "wick has row-major indices only")
    if node.op == "MaxPool" and len(node.outputs) > 1 and node.outputs[1]:
        bad_attribute(node, "outputs", node.outputs, "MaxPool's Indices output is not supported")
    if node.op in ("MaxPool", "AveragePool"):
        check_flags(node, "ceil_mode", "count_include_pad")
    kernel, pads = node.attrs.get("kernel_shape", []), node.attrs.get("pads", [])
    if (node.op == "AveragePool" and not node.attrs.get("count_include_pad", 0)
            and node.attrs.get("auto_pad", "NOTSET") == "NOTSET" and len(pads) == 2 * len(kernel)):
        begin, end = pads[:len(kernel)], pads[len(kernel):]
        if begin != end or _wide(kernel, begin, end):
            _refuse_pads(node, pads, kernel)


def _check_pad(node):
    if node.attrs.get("mode", "constant") not in ("constant", "reflect", "edge"):
        bad_attribute(node, "mode", node.attrs["mode"], "constant, reflect and edge are supported")


def _check_batch_norm(node):
    if node.attrs.get("training_mode", 0):
        bad_attribute(node, "training_mode", 1, "wick.onnx.load runs inference")
    if any(node.outputs[1:]):
        bad_attribute(node, "outputs", node.outputs, "running-statistics outputs are for training")


def _check_quantize(node):
    if node.attrs.get("block_size", 0):
        bad_attribute(node, "block_size", node.attrs["block_size"],
                      "blocked quantization is not supported")
    if node.op == "QuantizeLinear" and node.attrs.get("output_dtype", 0) not in (0, 2, 3):
        bad_attribute(node, "output_dtype", node.attrs["output_dtype"],
                      "uint8 and int8 are supported")


CHECKS = {"Conv": _check_spatial, "MaxPool": _check_spatial, "AveragePool": _check_spatial,
          "Pad": _check_pad, "Gemm": lambda node: check_flags(node, "transA", "transB"),
          "BatchNormalization": _check_batch_norm, "QuantizeLinear": _check_quantize,
          "DequantizeLinear": _check_quantize}
