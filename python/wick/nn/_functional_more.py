"""wick.nn.functional, part two: convolution, pooling, normalization and resampling functions
with PyTorch 1.13's signatures. The math is C++ (nn/conv_more.h, nn/norm_more.h,
nn/resample.h, bound in python/bind_nn_more.cpp); these wrappers accept PyTorch's argument
forms (an int or a one-element tuple for 1-D sizes, None strides, scalar or per-dim sizes and
scale factors) and raise PyTorch's exception types where it checks in Python."""

import math
import numbers

from wick import _C

_nn = _C._nn


def _single(op, name, value):
    """A 1-D size: an int or a tuple/list of one int, as PyTorch's _single."""
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(f"[{op}] {name} must be an int or a tuple of one int; got "
                               f"{tuple(value)}")
        value = value[0]
    return int(value)


def _stride_or_kernel(op, stride, kernel):
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        return kernel
    return _single(op, "stride", stride)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    stride, dilation = _single("conv1d", "stride", stride), _single("conv1d", "dilation", dilation)
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if stride != 1:
                raise ValueError("[conv1d] padding='same' is not supported for strided "
                                 "convolutions")
            total = dilation * (weight.shape[-1] - 1)
            if total % 2:
                # An odd total: PyTorch pads the extra zero on the right.
                input = pad(input, (total // 2, total - total // 2))
            padding = 0 if total % 2 else total // 2
        else:
            raise ValueError(f"[conv1d] Invalid padding string {padding!r}, should be one of "
                             f"'valid' or 'same'")
    return _nn.conv1d(input, weight, bias, stride, _single("conv1d", "padding", padding),
                      dilation, groups)


conv_transpose2d = _nn.conv_transpose2d


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    k = _single("max_pool1d", "kernel_size", kernel_size)
    return _nn.max_pool1d(input, k, _stride_or_kernel("max_pool1d", stride, k),
                          _single("max_pool1d", "padding", padding),
                          _single("max_pool1d", "dilation", dilation), ceil_mode, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    k = _single("avg_pool1d", "kernel_size", kernel_size)
    return _nn.avg_pool1d(input, k, _stride_or_kernel("avg_pool1d", stride, k),
                          _single("avg_pool1d", "padding", padding), ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    return _nn.adaptive_avg_pool1d(input, _single("adaptive_avg_pool1d", "output_size",
                                                  output_size))


def _adaptive_pair(input, output_size):
    """None in output_size keeps that input size, as in PyTorch."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 2:
            raise ValueError(f"[adaptive_max_pool2d] output_size must have 2 entries; got "
                             f"{tuple(output_size)}")
        h, w = output_size
        return (input.shape[-2] if h is None else h, input.shape[-1] if w is None else w)
    return output_size


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool2d(input, _adaptive_pair(input, output_size), return_indices)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


group_norm = _nn.group_norm
instance_norm = _nn.instance_norm
unfold = _nn.unfold
fold = _nn.fold
pixel_shuffle = _nn.pixel_shuffle
pixel_unshuffle = _nn.pixel_unshuffle
pairwise_distance = _nn.pairwise_distance
cosine_similarity = _nn.cosine_similarity


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise ValueError("[normalize] out= is not supported")
    return _nn.normalize(input, p, dim, eps)


def _maybe_inplace(input, result, inplace):
    if not inplace:
        return result
    input.copy_(result)
    return input


def dropout2d(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _maybe_inplace(input, _nn.dropout2d(input, p, training), inplace)


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


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise ValueError("[embedding_bag] max_norm, scale_grad_by_freq and sparse are not "
                         "supported")
    if mode not in _BAG_MODES:
        raise ValueError(f"mode has to be one of sum, mean or max; got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            f"GitHub.")
    rows = weight.shape[0] if weight.dim() == 2 else 0
    if padding_idx is None:
        padding_idx = -1
    elif not isinstance(padding_idx, numbers.Integral) or not -rows <= padding_idx < rows:
        raise ValueError(f"[embedding_bag] padding_idx {padding_idx} must be within "
                         f"num_embeddings ({rows})")
    elif padding_idx < 0:
        padding_idx += rows
    return _nn.embedding_bag(input, weight, offsets, mode, per_sample_weights,
                             include_last_offset, padding_idx)
