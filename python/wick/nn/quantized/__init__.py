"""Quantized modules (torch.ao.nn.quantized): int8 inference layers that wick.quantization.
convert() swaps in for float ones.

wick has no quantized tensor type, so an activation between these modules is a plain uint8
tensor and its scale and zero point are fixed at convert time: each module stores the
quantization parameters of its input (input_scale, input_zero_point) and of its output (scale,
zero_point), as calibration measured them. Weights are int8 with one float32 scale per output
channel (zero point 0: symmetric), biases stay float32.

The arithmetic of Linear and Conv2d (the kernels of wick._C._quantized, Note [int8 GEMM]):

    acc[o]  = sum_k (x_q[k] - input_zero_point) * w_q[o, k]          exact, in int32
    y[o]    = acc[o] * input_scale * weight_scale[o] + bias[o]       the real-valued output
    out_q   = clamp(round_half_even(y[o] / scale) + zero_point, 0, 255)   (relu: lower bound
                                                                         zero_point)

When wick._C._quantized is not there (a build without the int8 kernels), or inside
`with reference_kernels():`, the same arithmetic runs as float64 wick ops (the integer products
and sums are exact in float64); tests check the kernels against it to within one step.
"""

import contextlib
import math
import struct

import wick
from wick import _C
from wick.nn import functional as F
from wick.nn.modules.module import Module

_kernels = getattr(_C, "_quantized", None)


def _types():
    # wick.quantization imports this package; importing it here at load time would be a cycle
    from wick.quantization import _types as types
    return types
_force_reference = False


def backend():
    """'kernels' when the int8 kernels of wick._C._quantized run, 'reference' otherwise."""
    return "kernels" if _kernels is not None and not _force_reference else "reference"


@contextlib.contextmanager
def reference_kernels():
    """Runs quantized modules on the float64 reference arithmetic instead of the int8 kernels."""
    global _force_reference
    old, _force_reference = _force_reference, True
    try:
        yield
    finally:
        _force_reference = old


def _check_quantized_input(x, where):
    if not isinstance(x, wick.Tensor):
        raise TypeError(f"[{where}] expected a wick.Tensor; got {type(x).__name__}")
    if x.dtype != wick.uint8:
        raise TypeError(f"[{where}] expected a quantized input of dtype wick.uint8; got "
                        f"{x.dtype} (put a QuantStub before it, or call it on the output of "
                        "another quantized module)")


def _check_qparams(scale, zero_point, where):
    scale, zero_point = float(scale), int(zero_point)
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"[{where}] scale must be a positive finite number; got {scale}")
    if not 0 <= zero_point <= 255:
        raise ValueError(f"[{where}] zero_point must be in [0, 255] for uint8; got {zero_point}")
    return scale, zero_point


def quantize_per_tensor(input, scale, zero_point, dtype=wick.uint8):
    """float -> uint8 (or int8): clamp(round_half_even(x / scale) + zero_point, qmin, qmax)."""
    if not isinstance(input, wick.Tensor) or not input.is_floating_point():
        raise TypeError("[quantize_per_tensor] expected a floating-point wick.Tensor; got "
                        + (str(input.dtype) if isinstance(input, wick.Tensor)
                           else type(input).__name__))
    name = _types().dtype_name(dtype, "quantize_per_tensor")
    scale, zero_point = float(scale), int(zero_point)
    if backend() == "kernels":
        return _kernels.quantize_per_tensor(input, scale, zero_point, _types().dtype_object(name))
    qmin, qmax = (0, 255) if name == "uint8" else (-128, 127)
    inv = struct.unpack("f", struct.pack("f", 1.0 / scale))[0]  # 1.0f / scale, as PyTorch
    q = wick.clamp(wick.round(input.to(wick.float32) * inv) + zero_point, qmin, qmax)
    return q.to(_types().dtype_object(name))


def dequantize(input, scale, zero_point):
    """uint8/int8 -> float32: (q - zero_point) * scale."""
    if not isinstance(input, wick.Tensor) or input.is_floating_point():
        raise TypeError("[dequantize] expected a uint8 or int8 wick.Tensor; got "
                        + (str(input.dtype) if isinstance(input, wick.Tensor)
                           else type(input).__name__))
    if backend() == "kernels":
        return _kernels.dequantize(input, float(scale), int(zero_point))
    return (input.to(wick.float32) - int(zero_point)) * float(scale)


def _requantize_reference(acc, in_scale, w_scale, bias, out_scale, out_zp, relu, channel_dim):
    """float64 accumulator -> uint8, the kernels' requantization written with wick ops."""
    shape = [1] * acc.dim()
    shape[channel_dim] = -1
    y = acc * (w_scale.to(wick.float64) * in_scale).reshape(shape)
    if bias is not None:
        y = y + bias.to(wick.float64).reshape(shape)
    q = wick.round(y / out_scale) + out_zp
    return wick.clamp(q, out_zp if relu else 0, 255).to(wick.uint8)


def _int8_as_float64(w):
    return w.to(wick.float64)


class _QuantizedWeighted(Module):
    """What quantized Linear and Conv2d share: int8 weight, per-channel weight_scale, float
    bias, input and output quantization parameters, and the relu flag (fused modules)."""

    _fused_relu = False

    def _init_qparams(self, weight, weight_scale, bias, input_scale, input_zero_point, scale,
                      zero_point):
        name = self._get_name()
        input_scale, input_zero_point = _check_qparams(input_scale, input_zero_point, name)
        scale, zero_point = _check_qparams(scale, zero_point, name)
        if weight_scale.dim() != 1 or weight_scale.shape[0] != weight.shape[0]:
            raise ValueError(f"[{name}] weight_scale must have one value per output channel "
                             f"({weight.shape[0]}); got shape {list(weight_scale.shape)}")
        self.register_buffer("weight", weight)
        self.register_buffer("weight_scale", weight_scale.to(wick.float32).contiguous())
        self.register_buffer("bias", None if bias is None
                             else bias.detach().to(wick.float32).contiguous())
        self.register_buffer("input_scale", wick.tensor(input_scale, dtype=wick.float64))
        self.register_buffer("input_zero_point", wick.tensor(input_zero_point, dtype=wick.int64))
        self.register_buffer("scale", wick.tensor(scale, dtype=wick.float64))
        self.register_buffer("zero_point", wick.tensor(zero_point, dtype=wick.int64))

    def _qparams(self):
        return (float(self.input_scale.item()), int(self.input_zero_point.item()),
                float(self.scale.item()), int(self.zero_point.item()))

    def dequantized_weight(self):
        """The float weight the int8 one stands for: w_q * weight_scale[o]."""
        shape = [-1] + [1] * (self.weight.dim() - 1)
        return self.weight.to(wick.float32) * self.weight_scale.reshape(shape)


def quantize_weight(weight, weight_scale):
    """float weight [O, ...] -> int8 with per-output-channel scales (symmetric, zero point 0)."""
    shape = [-1] + [1] * (weight.dim() - 1)
    # times the float32 reciprocal, as PyTorch's quantize_val (nearbyint(value * inv_scale))
    inv = weight_scale.to(wick.float32).reciprocal().reshape(shape)
    q = wick.clamp(wick.round(weight.detach().to(wick.float32) * inv), -128, 127)
    return q.to(_types().int8) if not isinstance(_types().int8, str) else q


class Linear(_QuantizedWeighted):
    """Quantized y = x W^T + b on uint8 input [..., in_features] -> uint8 [..., out_features]."""

    def __init__(self, weight, weight_scale, bias, input_scale, input_zero_point, scale,
                 zero_point):
        super().__init__()
        if weight.dim() != 2:
            raise ValueError(f"[{self._get_name()}] weight must be [out_features, in_features]; "
                             f"got shape {list(weight.shape)}")
        self.out_features, self.in_features = int(weight.shape[0]), int(weight.shape[1])
        self._init_qparams(weight, weight_scale, bias, input_scale, input_zero_point, scale,
                           zero_point)

    def forward(self, x):
        _check_quantized_input(x, self._get_name())
        if x.dim() < 1 or x.shape[-1] != self.in_features:
            raise ValueError(f"[{self._get_name()}] expected input [..., {self.in_features}]; "
                             f"got shape {list(x.shape)}")
        in_s, in_zp, out_s, out_zp = self._qparams()
        lead = list(x.shape[:-1])
        x2 = x.reshape(-1, self.in_features)
        if backend() == "kernels":
            y = _kernels.linear(x2.contiguous(), self.weight, self.weight_scale, self.bias, in_s,
                                in_zp, out_s, out_zp, self._fused_relu)
        else:
            acc = F.linear(x2.to(wick.float64) - in_zp, _int8_as_float64(self.weight))
            y = _requantize_reference(acc, in_s, self.weight_scale, self.bias, out_s, out_zp,
                                      self._fused_relu, 1)
        return y.reshape(lead + [self.out_features])

    @classmethod
    def from_float(cls, mod, weight_qparams, input_qparams, output_qparams):
        linear = mod[0] if cls._fused_relu else mod
        w_scale = weight_qparams
        return cls(quantize_weight(linear.weight, w_scale), w_scale, linear.bias,
                   *input_qparams, *output_qparams)

    def extra_repr(self):
        in_s, in_zp, out_s, out_zp = self._qparams()
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"scale={out_s:.6g}, zero_point={out_zp}, input_scale={in_s:.6g}, "
                f"input_zero_point={in_zp}")


class LinearReLU(Linear):
    """Linear with the relu fused: requantization clamps at the output zero point."""
    _fused_relu = True


def _pair(v):
    return tuple(int(a) for a in v) if isinstance(v, (tuple, list)) else (int(v), int(v))


class Conv2d(_QuantizedWeighted):
    """Quantized 2-d convolution on uint8 NCHW input (zero padding pads with the input zero
    point, i.e. with real zeros)."""

    def __init__(self, weight, weight_scale, bias, stride, padding, dilation, groups,
                 input_scale, input_zero_point, scale, zero_point):
        super().__init__()
        if weight.dim() != 4:
            raise ValueError(f"[{self._get_name()}] weight must be [O, C/groups, kh, kw]; got "
                             f"shape {list(weight.shape)}")
        self.out_channels = int(weight.shape[0])
        self.in_channels = int(weight.shape[1]) * int(groups)
        self.kernel_size = (int(weight.shape[2]), int(weight.shape[3]))
        self.stride, self.padding, self.dilation = _pair(stride), _pair(padding), _pair(dilation)
        self.groups = int(groups)
        self._init_qparams(weight, weight_scale, bias, input_scale, input_zero_point, scale,
                           zero_point)

    def forward(self, x):
        _check_quantized_input(x, self._get_name())
        if x.dim() != 4 or x.shape[1] != self.in_channels:
            raise ValueError(f"[{self._get_name()}] expected input [N, {self.in_channels}, H, W]; "
                             f"got shape {list(x.shape)}")
        in_s, in_zp, out_s, out_zp = self._qparams()
        if backend() == "kernels":
            return _kernels.conv2d(x.contiguous(), self.weight, self.weight_scale, self.bias,
                                   list(self.stride), list(self.padding), list(self.dilation),
                                   self.groups, in_s, in_zp, out_s, out_zp, self._fused_relu)
        # (x_q - zp) padded with zeros is the padded real input divided by input_scale
        acc = F.conv2d(x.to(wick.float64) - in_zp, _int8_as_float64(self.weight), None,
                       self.stride, self.padding, self.dilation, self.groups)
        return _requantize_reference(acc, in_s, self.weight_scale, self.bias, out_s, out_zp,
                                     self._fused_relu, 1)

    @classmethod
    def from_float(cls, mod, weight_qparams, input_qparams, output_qparams):
        conv = mod[0] if cls._fused_relu else mod
        if isinstance(conv.padding, str):
            raise ValueError(f"[{cls.__name__}.from_float] padding={conv.padding!r} is not "
                             "supported; give the padding as numbers")
        w_scale = weight_qparams
        return cls(quantize_weight(conv.weight, w_scale), w_scale, conv.bias, conv.stride,
                   conv.padding, conv.dilation, conv.groups, *input_qparams, *output_qparams)

    def extra_repr(self):
        in_s, in_zp, out_s, out_zp = self._qparams()
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}, scale={out_s:.6g}, zero_point={out_zp}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s


class ConvReLU2d(Conv2d):
    """Conv2d with the relu fused: requantization clamps at the output zero point."""
    _fused_relu = True


class _QParamsModule(Module):
    def __init__(self, scale, zero_point):
        super().__init__()
        scale, zero_point = _check_qparams(scale, zero_point, self._get_name())
        self.register_buffer("scale", wick.tensor(scale, dtype=wick.float64))
        self.register_buffer("zero_point", wick.tensor(zero_point, dtype=wick.int64))

    def _sz(self):
        return float(self.scale.item()), int(self.zero_point.item())

    def extra_repr(self):
        s, z = self._sz()
        return f"scale={s:.6g}, zero_point={z}"


class Quantize(_QParamsModule):
    """float -> uint8 with fixed (scale, zero_point): what QuantStub becomes."""

    def __init__(self, scale, zero_point, dtype=wick.uint8):
        if _types().dtype_name(dtype, "Quantize") != "uint8":
            raise ValueError("[Quantize] wick's quantized kernels take uint8 activations; got "
                             f"dtype {dtype!r}")
        super().__init__(scale, zero_point)

    def forward(self, x):
        if not isinstance(x, wick.Tensor) or not x.is_floating_point():
            raise TypeError("[Quantize] expected a floating-point input; got "
                            + (str(x.dtype) if isinstance(x, wick.Tensor) else type(x).__name__))
        return quantize_per_tensor(x, *self._sz())


class DeQuantize(_QParamsModule):
    """uint8 -> float32 with the (scale, zero_point) of its input: what DeQuantStub becomes."""

    def forward(self, x):
        _check_quantized_input(x, "DeQuantize")
        return dequantize(x, *self._sz())


class ReLU(_QParamsModule):
    """relu on uint8: max(q, zero_point) (the real value 0 is the integer zero_point); the
    output keeps the input's (scale, zero_point)."""

    def forward(self, x):
        _check_quantized_input(x, "quantized.ReLU")
        zp = self._sz()[1]
        return wick.maximum(x, wick.full((), zp, dtype=wick.uint8))


class FloatFunctional(Module):
    """Float tensor ops that quantization must see as modules (torch.ao.nn.quantized.
    FloatFunctional): `self.skip_add = FloatFunctional()` in __init__, `self.skip_add.add(x, y)`
    in forward. prepare() replaces activation_post_process with an observer of the result, and
    convert() swaps the module for QFunctional."""

    def __init__(self):
        super().__init__()
        from wick.nn.modules.linear import Identity
        self.activation_post_process = Identity()
        self._input_hook = None  # set by prepare(): records where the inputs came from

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not meant to be called; use its add, add_relu, "
                           "mul or cat")

    def _seen(self, op, *tensors):
        if self._input_hook is not None:
            self._input_hook(self, op, tensors)

    def add(self, x, y):
        self._seen("add", x, y)
        return self.activation_post_process(x + y)

    def add_relu(self, x, y):
        self._seen("add_relu", x, y)
        return self.activation_post_process(F.relu(x + y))

    def mul(self, x, y):
        self._seen("mul", x, y)
        return self.activation_post_process(x * y)

    def cat(self, tensors, dim=0):
        self._seen("cat", *tensors)
        return self.activation_post_process(wick.cat(list(tensors), dim))


class QFunctional(Module):
    """FloatFunctional's ops on uint8 tensors. Each op dequantizes its inputs with their
    calibrated (scale, zero_point), computes in float32 and quantizes the result with the output
    (scale, zero_point): exact to one rounding, though not an integer kernel (PyTorch's
    quantized::add rescales in integers; the result differs by at most one step)."""

    def __init__(self, input_qparams, scale, zero_point):
        super().__init__()
        scale, zero_point = _check_qparams(scale, zero_point, "QFunctional")
        self.register_buffer("scale", wick.tensor(scale, dtype=wick.float64))
        self.register_buffer("zero_point", wick.tensor(zero_point, dtype=wick.int64))
        for s, z in input_qparams:
            _check_qparams(s, z, "QFunctional")
        self.register_buffer("input_scales", wick.tensor([float(s) for s, _ in input_qparams],
                                                         dtype=wick.float64))
        self.register_buffer("input_zero_points",
                             wick.tensor([int(z) for _, z in input_qparams], dtype=wick.int64))

    def _inputs(self, tensors, op):
        n = self.input_scales.shape[0]
        if len(tensors) != n:
            raise ValueError(f"[QFunctional.{op}] was calibrated with {n} inputs; got "
                             f"{len(tensors)}")
        out = []
        for i, t in enumerate(tensors):
            _check_quantized_input(t, f"QFunctional.{op}")
            out.append(dequantize(t, self.input_scales[i].item(),
                                  self.input_zero_points[i].item()))
        return out

    def _out(self, y):
        return quantize_per_tensor(y, self.scale.item(), int(self.zero_point.item()))

    def add(self, x, y):
        a, b = self._inputs([x, y], "add")
        return self._out(a + b)

    def add_relu(self, x, y):
        a, b = self._inputs([x, y], "add_relu")
        return self._out(F.relu(a + b))

    def mul(self, x, y):
        a, b = self._inputs([x, y], "mul")
        return self._out(a * b)

    def cat(self, tensors, dim=0):
        return self._out(wick.cat(self._inputs(list(tensors), "cat"), dim))

    def extra_repr(self):
        return f"scale={self.scale.item():.6g}, zero_point={int(self.zero_point.item())}"
