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


def _check_zero_points(zero_points, quant_min, quant_max, where):
    # PyTorch checks this too: a zero point outside the range clamps every value off its grid.
    outside = [z for z in zero_points if not quant_min <= z <= quant_max]
    if outside:
        raise ValueError(f"[{where}] zero_point must be in [quant_min, quant_max] = "
                         f"[{quant_min}, {quant_max}]; got {outside[0]}")


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
    _check_zero_points([zero_point], quant_min, quant_max, "fake_quantize_per_tensor_affine")
    return (quantize_float(input, scale, zero_point, quant_min, quant_max) - zero_point) * scale


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    _check(input, "fake_quantize_per_channel_affine")
    _check_range(quant_min, quant_max, "fake_quantize_per_channel_affine")
    where = "fake_quantize_per_channel_affine"
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"[{where}] axis must be an int; got {axis!r}")
    if not -input.dim() <= axis < input.dim():
        raise IndexError(f"[{where}] axis {axis} is out of range for a {input.dim()}-d input")
    axis = axis % input.dim()
    for name, t in (("scale", scale), ("zero_point", zero_point)):
        if not isinstance(t, wick.Tensor):
            raise TypeError(f"[{where}] {name} must be a Tensor; got {type(t).__name__}")
        if t.dim() != 1 or t.shape[0] != input.shape[axis]:
            raise ValueError(f"[{where}] {name} must have one value per channel of axis {axis} "
                             f"({input.shape[axis]}); got shape {list(t.shape)}")
    _check_zero_points(zero_point.tolist(), quant_min, quant_max, where)
    shape = [1] * input.dim()
    shape[axis] = -1
    s = scale.to(input.dtype).reshape(shape)
    z = zero_point.to(input.dtype).reshape(shape)
    q = wick.clamp(wick.round(input * s.reciprocal()) + z, quant_min, quant_max)
    return (q - z) * s
