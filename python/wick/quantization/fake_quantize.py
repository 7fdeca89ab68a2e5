"""Fake quantization (torch.fake_quantize_per_tensor_affine / _per_channel_affine): quantize and
dequantize in floating point, x -> (clamp(round(x / scale) + zp, qmin, qmax) - zp) * scale.

The result is a float tensor holding exactly the values the integer model represents, so a float
model whose weights and activations pass through these functions is the reference the int8
kernels are checked against (to within one quantization step: the kernels round the requantized
accumulator once, the reference rounds float sums)."""

import wick


def _check(input, where):
    if not isinstance(input, wick.Tensor):
        raise TypeError(f"[{where}] expected a wick.Tensor; got {type(input).__name__}")
    if not input.is_floating_point():
        raise TypeError(f"[{where}] expected a floating-point input; got {input.dtype}")


def _check_range(quant_min, quant_max, where):
    if not (isinstance(quant_min, int) and isinstance(quant_max, int) and quant_min < quant_max):
        raise ValueError(f"[{where}] need integers quant_min < quant_max; got "
                         f"quant_min={quant_min!r}, quant_max={quant_max!r}")


def quantize_float(input, scale, zero_point, quant_min, quant_max):
    """The integers (as floats) round(x / scale) + zero_point clamped to [quant_min, quant_max];
    scale and zero_point are numbers or tensors that broadcast against input. Rounding is half
    to even, as PyTorch's (std::nearbyint)."""
    q = wick.round(input * (1.0 / scale)) + zero_point if not isinstance(scale, wick.Tensor) \
        else wick.round(input * scale.reciprocal()) + zero_point
    return wick.clamp(q, quant_min, quant_max)


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    _check(input, "fake_quantize_per_tensor_affine")
    _check_range(quant_min, quant_max, "fake_quantize_per_tensor_affine")
    scale, zero_point = float(scale), int(zero_point)
    if not scale > 0:
        raise ValueError(f"[fake_quantize_per_tensor_affine] scale must be positive; got {scale}")
    return (quantize_float(input, scale, zero_point, quant_min, quant_max) - zero_point) * scale


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    _check(input, "fake_quantize_per_channel_affine")
    _check_range(quant_min, quant_max, "fake_quantize_per_channel_affine")
    axis = axis % input.dim()
    if scale.dim() != 1 or scale.shape[0] != input.shape[axis]:
        raise ValueError(f"[fake_quantize_per_channel_affine] scale must have one value per "
                         f"channel of axis {axis} ({input.shape[axis]}); got shape "
                         f"{list(scale.shape)}")
    shape = [1] * input.dim()
    shape[axis] = -1
    s = scale.to(input.dtype).reshape(shape)
    z = zero_point.to(input.dtype).reshape(shape)
    q = wick.clamp(wick.round(input * s.reciprocal()) + z, quant_min, quant_max)
    return (q - z) * s
