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
    # TODO(19): affine_qparams: widen [min, max] to include 0, scale = range / (qmax - qmin) (>= eps), zero point = qmin - round(min / scale), clamped
    raise NotImplementedError("affine_qparams: widen [min, max] to include 0, scale = range / (qmax - qmin) (>= eps), zero point = qmin - round(min / scale), clamped")


def symmetric_weight_qparams(weight, qmin=INT8[0], qmax=INT8[1]):
    """Per-output-channel symmetric scales of a weight [out, ...] (PyTorch's PerChannelMinMaxObserver
    with per_channel_symmetric): scale[o] = max(|w[o]|) / ((qmax - qmin) / 2), at least eps; the
    zero point is 0. Returns a float32 array of shape [out]."""
    # TODO(19): symmetric_weight_qparams: amax over every axis but 0, divided by (qmax - qmin) / 2, floored at eps
    raise NotImplementedError("symmetric_weight_qparams: amax over every axis but 0, divided by (qmax - qmin) / 2, floored at eps")


def quantize(x, scale, zero_point, qmin, qmax, axis=None):
    """q = clamp(round(x / scale) + zero_point, qmin, qmax), rounding half to even (np.rint, as
    PyTorch and ONNX do). With `axis`, scale and zero_point are arrays along that axis of x
    (per-channel). Returns int32."""
    # TODO(19): quantize: broadcast per-channel scales along `axis`, then rint, add, clip
    raise NotImplementedError("quantize: broadcast per-channel scales along `axis`, then rint, add, clip")


def dequantize(q, scale, zero_point, axis=None):
    """x = scale * (q - zero_point), float32 (per-channel along `axis` as in quantize)."""
    # TODO(19): dequantize: the inverse map, broadcasting per-channel parameters like quantize
    raise NotImplementedError("dequantize: the inverse map, broadcasting per-channel parameters like quantize")


def int8_linear(xq, x_scale, x_zero_point, wq, w_scale, bias, y_scale, y_zero_point, relu=False):
    """The integer Linear: xq uint8 [n, k], wq int8 [o, k], w_scale [o], bias float [o].
    acc[n, o] = sum_k (xq - x_zp) * wq in int32 - computed as xq @ wq.T - x_zp * rowsum(wq), which
    is what a u8 x s8 kernel does (the product of raw bytes, then one correction per output);
    y = acc * x_scale * w_scale[o] + bias[o]; the output is uint8:
    clamp(rint(y / y_scale) + y_zp, lo, 255), lo = y_zp with relu (0.0's code) and 0 without.
    Must equal wick's kernel, wick._C._quantized.linear, exactly."""
    # TODO(19): int8_linear: int32 GEMM of the raw codes, zero-point correction with the weight row sums, then requantize in float
    raise NotImplementedError("int8_linear: int32 GEMM of the raw codes, zero-point correction with the weight row sums, then requantize in float")


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

    # TODO(19): widen: one hook per layer (ReLU applied for conv1, conv2, fc1), plus the input; remove the hooks at the end
    raise NotImplementedError("widen: one hook per layer (ReLU applied for conv1, conv2, fc1), plus the input; remove the hooks at the end")
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
        # TODO(19): __call__: quantize the input; conv1 and conv2 (relu=True) chained through their (scale, zero point); max-pool 2; flatten; fc1 (relu) and fc2; dequantize the logits with fc2's qparams
        raise NotImplementedError("__call__: quantize the input; conv1 and conv2 (relu=True) chained through their (scale, zero point); max-pool 2; flatten; fc1 (relu) and fc2; dequantize the logits with fc2's qparams")
