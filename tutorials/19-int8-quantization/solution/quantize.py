"""Lab 19: quantize the MNIST CNN to int8 by hand.

Real numbers x are stored as 8-bit integers q with x ~= scale * (q - zero_point):
  - activations: *affine* uint8, q in [0, 255]; the zero point is the integer that stands for 0.0,
    so a ReLU output (all >= 0) uses all 256 levels;
  - weights: *symmetric* int8 per output channel, zero point 0, one scale per row of W: each
    channel gets the resolution its own range allows.
A quantized Linear multiplies uint8 by int8 and accumulates in int32 - the AVX-512 VNNI
instruction vpdpbusd does 64 of these per cycle per core, four times the float32 FMAs - and turns
the int32 sum back into the next layer's uint8 ("requantization").

Everything here works on NumPy arrays (float32 in, integer arrays out) except `calibrate` and
`QuantizedCNN`, which run the model in wick."""

import numpy as np

import wick

UINT8 = (0, 255)
INT8 = (-128, 127)


def affine_qparams(min_val, max_val, qmin=UINT8[0], qmax=UINT8[1]):
    """(scale, zero_point) mapping [min_val, max_val] onto [qmin, qmax], as PyTorch's MinMaxObserver
    computes them for per_tensor_affine: the range is first widened to contain 0 (so 0.0 is exactly
    representable: padding and ReLU depend on it), scale is at least float32's eps, and the zero
    point is an integer in [qmin, qmax]. Returns (float, int)."""
    # BEGIN SOLUTION: widen [min, max] to include 0, scale = range / (qmax - qmin) (>= eps), zero point = qmin - round(min / scale), clamped
    min_val, max_val = min(float(min_val), 0.0), max(float(max_val), 0.0)
    scale = max((max_val - min_val) / float(qmax - qmin), float(np.finfo(np.float32).eps))
    zero_point = qmin - int(round(min_val / scale))
    return scale, int(min(max(zero_point, qmin), qmax))
    # END SOLUTION


def symmetric_weight_qparams(weight, qmin=INT8[0], qmax=INT8[1]):
    """Per-output-channel symmetric scales of a weight [out, ...] (PyTorch's PerChannelMinMaxObserver
    with per_channel_symmetric): scale[o] = max(|w[o]|) / ((qmax - qmin) / 2), at least eps; the
    zero point is 0. Returns a float32 array of shape [out]."""
    # BEGIN SOLUTION: amax over every axis but 0, divided by (qmax - qmin) / 2, floored at eps
    amax = np.abs(weight.reshape(weight.shape[0], -1)).max(axis=1)
    scale = amax / ((qmax - qmin) / 2.0)
    return np.maximum(scale, np.finfo(np.float32).eps).astype(np.float32)
    # END SOLUTION


def quantize(x, scale, zero_point, qmin, qmax, axis=None):
    """q = clamp(round(x / scale) + zero_point, qmin, qmax), rounding half to even (np.rint, as
    PyTorch and ONNX do). With `axis`, scale and zero_point are arrays along that axis of x
    (per-channel). Returns int32."""
    # BEGIN SOLUTION: broadcast per-channel scales along `axis`, then rint, add, clip
    if axis is not None:
        shape = [1] * x.ndim
        shape[axis] = -1
        scale = np.reshape(scale, shape)
        zero_point = np.reshape(zero_point, shape)
    q = np.rint(x / scale) + zero_point
    return np.clip(q, qmin, qmax).astype(np.int32)
    # END SOLUTION


def dequantize(q, scale, zero_point, axis=None):
    """x = scale * (q - zero_point), float32 (per-channel along `axis` as in quantize)."""
    # BEGIN SOLUTION: the inverse map, broadcasting per-channel parameters like quantize
    if axis is not None:
        shape = [1] * q.ndim
        shape[axis] = -1
        scale = np.reshape(scale, shape)
        zero_point = np.reshape(zero_point, shape)
    return ((q.astype(np.float32) - zero_point) * scale).astype(np.float32)
    # END SOLUTION


def int8_linear(xq, x_scale, x_zero_point, wq, w_scale, bias, y_scale, y_zero_point, relu=False):
    """The integer Linear: xq uint8 [n, k], wq int8 [o, k], w_scale [o], bias float [o].
    acc[n, o] = sum_k (xq - x_zp) * wq in int32 - computed as xq @ wq.T - x_zp * rowsum(wq), which
    is what a u8 x s8 kernel does (the product of raw bytes, then one correction per output);
    y = acc * x_scale * w_scale[o] + bias[o]; the output is uint8:
    clamp(rint(y / y_scale) + y_zp, lo, 255), lo = y_zp with relu (0.0's code) and 0 without.
    Must equal wick's kernel, wick._C._quantized.linear, exactly."""
    # BEGIN SOLUTION: int32 GEMM of the raw codes, zero-point correction with the weight row sums, then requantize in float
    xq = xq.astype(np.int32)
    wq = wq.astype(np.int32)
    acc = xq @ wq.T - x_zero_point * wq.sum(axis=1)
    y = acc.astype(np.float32) * (np.float32(x_scale) * w_scale.astype(np.float32))
    if bias is not None:
        y = y + bias.astype(np.float32)
    q = np.rint(y / np.float32(y_scale)) + y_zero_point
    return np.clip(q, y_zero_point if relu else 0, 255).astype(np.uint8)
    # END SOLUTION


def calibrate(model, batches):
    """Runs the float model on the calibration batches and returns {name: (min, max)} of every
    tensor the quantized model stores in uint8: "input" (the image), and the output of "conv1",
    "conv2", "fc1" after their ReLU (the quantized layers fuse it), and "fc2" (the logits).
    Use forward hooks (module.register_forward_hook(fn(module, inputs, output))) to see them;
    a hook's output is before the ReLU, which you can apply yourself."""
    ranges = {}

    def widen(name, t):
        lo, hi = float(t.min().item()), float(t.max().item())
        old = ranges.get(name, (lo, hi))
        ranges[name] = (min(old[0], lo), max(old[1], hi))

    # BEGIN SOLUTION: one hook per layer (ReLU applied for conv1, conv2, fc1), plus the input; remove the hooks at the end
    handles = []
    for name in ("conv1", "conv2", "fc1", "fc2"):
        def hook(module, inputs, output, name=name):
            widen(name, output.relu() if name != "fc2" else output)
        handles.append(getattr(model, name).register_forward_hook(hook))
    with wick.no_grad():
        for x in batches:
            widen("input", x)
            model(x)
    for h in handles:
        h.remove()
    # END SOLUTION
    return ranges


class QuantizedCNN:
    """The CNN (examples/train_mnist.py) in int8 on wick's kernels: quantize the image, two
    quantized convolutions with ReLU fused, max-pool on the uint8 codes (max commutes with a
    monotone map), flatten, two quantized Linears, dequantize the logits."""

    def __init__(self, model, ranges):
        self.qparams = {name: affine_qparams(*ranges[name]) for name in ranges}
        self.layers = {}
        for name in ("conv1", "conv2", "fc1", "fc2"):
            layer = getattr(model, name)
            w = layer.weight.detach().numpy()
            w_scale = symmetric_weight_qparams(w)
            wq = quantize(w, w_scale, np.zeros_like(w_scale, dtype=np.int32), *INT8, axis=0)
            self.layers[name] = (wick.from_numpy(wq.astype(np.int8)), wick.from_numpy(w_scale),
                                 layer.bias.detach().clone())

    def weight_bytes(self):
        return sum(w.numel() * 1 + s.numel() * 4 + b.numel() * 4 for w, s, b in self.layers.values())

    def __call__(self, x):
        ops = wick._C._quantized
        q = self.qparams
        # BEGIN SOLUTION: quantize the input; conv1 and conv2 (relu=True) chained through their (scale, zero point); max-pool 2; flatten; fc1 (relu) and fc2; dequantize the logits with fc2's qparams
        h = ops.quantize_per_tensor(x, q["input"][0], q["input"][1], wick.uint8)
        previous = "input"
        for name in ("conv1", "conv2"):
            w, s, b = self.layers[name]
            h = ops.conv2d(h, w, s, b, [1, 1], [0, 0], [1, 1], 1, *q[previous], *q[name], True)
            previous = name
        h = wick.nn.functional.max_pool2d(h, 2).flatten(1)
        for name, relu in (("fc1", True), ("fc2", False)):
            w, s, b = self.layers[name]
            h = ops.linear(h, w, s, b, *q[previous], *q[name], relu)
            previous = name
        return ops.dequantize(h, *q["fc2"])
        # END SOLUTION
