"""Resampling in wick.nn.functional: pad, interpolate (and its old names upsample,
upsample_nearest, upsample_bilinear), pixel_shuffle and pixel_unshuffle. The math is C++; the
wrappers accept PyTorch's argument forms (scalar or per-dim sizes and scale factors) and raise
PyTorch's exception types where it checks in Python."""

import math

from wick import _C

_nn = _C._nn


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"[pad] Unrecognised padding mode {mode}; expected one of "
                                  f"{', '.join(_PAD_MODES)}")
    if mode != "constant":
        if value is not None and value != 0:
            raise ValueError(f"[pad] Padding mode \"{mode}\" doesn't take in value argument")
        k, n = len(pad) // 2, input.dim()
        if len(pad) % 2 == 0 and not (1 <= k <= 3 and n in (k + 1, k + 2)):
            raise NotImplementedError(
                f"[pad] Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for "
                f"now: {mode} padding of {k} dims of an input of shape {tuple(input.shape)}")
    return _nn.pad(input, [int(v) for v in pad], mode, 0.0 if value is None else float(value))


_INTERP_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "area")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode == "bicubic":
        raise NotImplementedError("[interpolate] mode 'bicubic' is not supported by wick")
    if mode not in _INTERP_MODES:
        raise NotImplementedError(
            f"[interpolate] Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.dim()}D) for the modes: {' | '.join(_INTERP_MODES)} (got {mode})")
    if antialias:
        raise NotImplementedError("[interpolate] antialias=True is not supported by wick")
    if align_corners is not None and mode not in ("linear", "bilinear", "trilinear"):
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    spatial = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    sizes, scales = [], []
    if size is not None:
        sizes = list(size) if isinstance(size, (tuple, list)) else [size] * max(spatial, 1)
        if len(sizes) != spatial:
            raise ValueError(
                f"Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                f"output size in (o1, o2, ...,oK) format.")
        sizes = [int(s) for s in sizes]
    else:
        scales = (list(scale_factor) if isinstance(scale_factor, (tuple, list))
                  else [scale_factor] * max(spatial, 1))
        if len(scales) != spatial:
            raise ValueError(
                f"Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(input.shape[2:])} and scale_factor "
                f"of shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                f"format and scale_factor in (s1, s2, ...,sK) format.")
        scales = [float(s) for s in scales]
        if any(not math.isfinite(s) for s in scales):
            raise ValueError(f"[interpolate] scale_factor must be finite; got {scale_factor}")
    if mode == "area" and scales and recompute_scale_factor is None:
        recompute_scale_factor = True  # PyTorch's area mode always maps from the sizes
    return _nn.interpolate(input, sizes, scales, mode, align_corners,
                           bool(recompute_scale_factor))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


pixel_shuffle = _nn.pixel_shuffle
pixel_unshuffle = _nn.pixel_unshuffle
