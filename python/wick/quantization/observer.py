"""Observers (torch.ao.quantization.observer): modules that watch the tensors passing through
them during calibration and then choose a scale and zero point for 8-bit quantization.

    q = clamp(round(x / scale) + zero_point, quant_min, quant_max)
    x ~ (q - zero_point) * scale

Every observer returns its input unchanged; calculate_qparams() turns what it saw into
(scale, zero_point) tensors by the same arithmetic as PyTorch's observer of the same name (in
float32), so the two choose the same parameters for the same data (tests/python/
test_quantization.py holds them to it). HistogramObserver follows PyTorch 1.13's algorithm with
the fix of pytorch/pytorch#83672: 1.13 truncated the histogram's range to integers
(`min=int(min_val)`), which later PyTorch drops.
"""

import functools
import math
import struct
import warnings

import wick
from wick.nn.modules.module import Module
from wick.quantization import _types
from wick.quantization._types import (per_channel_symmetric, per_tensor_affine,
                                      per_tensor_symmetric, per_channel_affine)

_FLOAT32_EPS = 2.0 ** -23


def _f32(x):
    """x rounded to float32, as PyTorch compares a float32 tensor with a Python float."""
    return struct.unpack("f", struct.pack("f", x))[0]


class _PartialWrapper:
    """What Observer.with_args(...) returns: a factory that makes the observer with those
    arguments (QConfig holds factories, and prepare() calls one per module)."""

    def __init__(self, p):
        self.p = p

    def __call__(self, *args, **kwargs):
        return self.p(*args, **kwargs)

    def with_args(self, **kwargs):
        return _PartialWrapper(functools.partial(self.p, **kwargs))

    def __repr__(self):
        return repr(self.p)


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(functools.partial(cls_or_self, **kwargs))


class ObserverBase(Module):
    """The base of every observer: dtype, qscheme, the integer range and eps, and the
    min/max -> (scale, zero_point) arithmetic (UniformQuantizationObserverBase in PyTorch)."""

    _qschemes = (per_tensor_affine, per_tensor_symmetric)
    with_args = classmethod(_with_args)

    def __init__(self, dtype=_types.quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_FLOAT32_EPS):
        super().__init__()
        name = type(self).__name__
        self._dtype_name = _types.dtype_name(dtype, name)
        self.dtype = _types.dtype_object(self._dtype_name)
        self.qscheme = _types.to_qscheme(qscheme, name)
        if self.qscheme not in self._qschemes:
            raise ValueError(f"[{name}] qscheme {self.qscheme!r} is not supported; it takes "
                             + ", ".join(repr(q) for q in self._qschemes))
        if not isinstance(reduce_range, bool):
            raise TypeError(f"[{name}] reduce_range must be a bool; got {reduce_range!r}")
        if _types.is_symmetric(self.qscheme) and reduce_range and self._dtype_name == "uint8":
            raise ValueError(f"[{name}] cannot reduce the range of symmetric quantization for "
                             "quint8")
        if not (isinstance(eps, (int, float)) and eps > 0):
            raise ValueError(f"[{name}] eps must be a positive number; got {eps!r}")
        self.reduce_range = reduce_range
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        self.quant_min, self.quant_max = _types.qmin_qmax(self._dtype_name, reduce_range,
                                                          quant_min, quant_max, name)
        self.register_buffer("eps", wick.tensor([float(eps)], dtype=wick.float32))

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self):
        raise NotImplementedError

    def has_observed(self):
        """Whether forward() has seen at least one non-empty tensor (convert() requires it)."""
        return not math.isinf(float(self.min_val.reshape(-1)[0].item())) \
            if self.min_val.numel() > 0 else False

    @staticmethod
    def _check_input(x, where):
        if not isinstance(x, wick.Tensor):
            raise TypeError(f"[{where}] expected a wick.Tensor; got {type(x).__name__}")
        if not x.is_floating_point():
            raise TypeError(f"[{where}] observes floating-point tensors; got {x.dtype}")

    def _calculate_qparams(self, min_val, max_val):
        """(scale float32 [C], zero_point int64 [C]) from min/max tensors, as PyTorch's
        _calculate_qparams: the range is widened to include 0 (so 0 is exact); symmetric
        schemes use max(|min|, max) and zero point 0 (int8) or 128 (uint8)."""
        if min_val.numel() == 0 or (min_val.dim() == 0 and math.isinf(min_val.item())
                                    and min_val.item() > 0):
            warnings.warn(f"[{type(self).__name__}.calculate_qparams] the observer has seen "
                          "no data; returning scale 1 and zero point 0")
            return wick.tensor([1.0]), wick.tensor([0], dtype=wick.int64)
        min_val = min_val.to(wick.float32)
        max_val = max_val.to(wick.float32)
        if not bool((wick.isfinite(min_val) & wick.isfinite(max_val)).all().item()):
            # A NaN or an infinity seen while observing would make the scale NaN or infinite,
            # and every quantized value wrong (PyTorch asserts on NaN, passes infinity through).
            raise RuntimeError(f"[{type(self).__name__}.calculate_qparams] the observed range "
                               f"is not finite: min {min_val.tolist()}, max {max_val.tolist()} "
                               f"(NaN or infinity in the calibration data?)")
        if bool((min_val > max_val).any().item()):
            raise RuntimeError(f"[{type(self).__name__}.calculate_qparams] min {min_val} "
                               f"should be less than max {max_val}")
        qmin, qmax = self.quant_min, self.quant_max
        zeros = wick.zeros_like(min_val)
        min_neg = wick.minimum(min_val, zeros)
        max_pos = wick.maximum(max_val, zeros)
        if _types.is_symmetric(self.qscheme):
            max_pos = wick.maximum(-min_neg, max_pos)
            scale = max_pos / ((qmax - qmin) / 2)
            scale = wick.maximum(scale, self.eps)
            zp = 0
            if self._dtype_name == "uint8":
                zp = (qmin + qmax) // 2 if self.has_customized_qrange else 128
            zero_point = wick.full(tuple(scale.shape), zp, dtype=wick.int64)
        else:
            scale = (max_pos - min_neg) / float(qmax - qmin)
            scale = wick.maximum(scale, self.eps)
            zero_point = qmin - wick.round(min_neg / scale).to(wick.int64)
            zero_point = wick.clamp(zero_point, qmin, qmax).to(wick.int64)
        return scale.reshape(-1), zero_point.reshape(-1)

    def _repr_qparams(self):
        return (f"dtype={self._dtype_name}, qscheme={self.qscheme!r}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}")


class MinMaxObserver(ObserverBase):
    """Running minimum and maximum of everything seen; scale = (max - min) / (qmax - qmin)."""

    def __init__(self, dtype=_types.quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_FLOAT32_EPS):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.register_buffer("min_val", wick.tensor(float("inf")))
        self.register_buffer("max_val", wick.tensor(float("-inf")))

    def forward(self, x_orig):
        self._check_input(x_orig, type(self).__name__)
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(wick.float32)
        self.min_val = wick.minimum(x.min(), self.min_val)
        self.max_val = wick.maximum(x.max(), self.max_val)
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def reset_min_max_vals(self):
        self.min_val = wick.tensor(float("inf"))
        self.max_val = wick.tensor(float("-inf"))

    def extra_repr(self):
        return f"min_val={self.min_val.item()}, max_val={self.max_val.item()}, " \
               + self._repr_qparams()


class MovingAverageMinMaxObserver(MinMaxObserver):
    """min/max as exponential moving averages: m <- m + c (batch_min - m); the first batch sets
    them. Less sensitive than MinMaxObserver to one outlying batch."""

    def __init__(self, averaging_constant=0.01, dtype=_types.quint8, qscheme=per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_FLOAT32_EPS):
        if not (isinstance(averaging_constant, (int, float)) and 0 < averaging_constant <= 1):
            raise ValueError("[MovingAverageMinMaxObserver] averaging_constant must be in "
                             f"(0, 1]; got {averaging_constant!r}")
        self.averaging_constant = float(averaging_constant)
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)

    def forward(self, x_orig):
        self._check_input(x_orig, type(self).__name__)
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(wick.float32)
        cur_min, cur_max = x.min(), x.max()
        if math.isinf(self.min_val.item()) and math.isinf(self.max_val.item()):
            self.min_val, self.max_val = cur_min, cur_max
        else:
            c = self.averaging_constant
            self.min_val = self.min_val + c * (cur_min - self.min_val)
            self.max_val = self.max_val + c * (cur_max - self.max_val)
        return x_orig


class PerChannelMinMaxObserver(ObserverBase):
    """Running min/max per slice along ch_axis (a weight's output channels): one scale per
    channel, so a channel of small weights is not quantized with a large channel's step."""

    _qschemes = (per_channel_affine, per_channel_symmetric)

    def __init__(self, ch_axis=0, dtype=_types.quint8, qscheme=per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_FLOAT32_EPS):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        if not isinstance(ch_axis, int) or isinstance(ch_axis, bool):
            raise TypeError(f"[PerChannelMinMaxObserver] ch_axis must be an int; got {ch_axis!r}")
        self.ch_axis = ch_axis
        self.register_buffer("min_val", wick.zeros(0))
        self.register_buffer("max_val", wick.zeros(0))

    def forward(self, x_orig):
        self._check_input(x_orig, "PerChannelMinMaxObserver")
        if x_orig.numel() == 0:
            return x_orig
        if not -x_orig.dim() <= self.ch_axis < x_orig.dim():
            raise ValueError(f"[PerChannelMinMaxObserver] ch_axis {self.ch_axis} is out of "
                             f"range for a {x_orig.dim()}-d input")
        x = x_orig.detach().to(wick.float32)
        axis = self.ch_axis % x.dim()
        y = x.transpose(0, axis) if axis != 0 else x
        y = y.contiguous().reshape(y.shape[0], -1)
        cur_min, cur_max = wick.amin(y, 1), wick.amax(y, 1)
        if self.min_val.numel() == 0:
            self.min_val, self.max_val = cur_min, cur_max
        else:
            if tuple(self.min_val.shape) != tuple(cur_min.shape):
                raise ValueError(f"[PerChannelMinMaxObserver] saw {self.min_val.shape[0]} "
                                 f"channels before and {cur_min.shape[0]} now")
            self.min_val = wick.minimum(cur_min, self.min_val)
            self.max_val = wick.maximum(cur_max, self.max_val)
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def has_observed(self):
        return self.min_val.numel() > 0

    def reset_min_max_vals(self):
        self.min_val, self.max_val = wick.zeros(0), wick.zeros(0)

    def extra_repr(self):
        return f"ch_axis={self.ch_axis}, " + self._repr_qparams()


class HistogramObserver(ObserverBase):
    """A running histogram (`bins` bins over the running [min, max]); calculate_qparams searches
    for the clipping range [new_min, new_max] that minimises the L2 error of quantizing the
    histogram's mass to 2^8 levels (caffe2's NormMinimization, as PyTorch does), so rare
    outliers no longer stretch the scale of everything else.

    When a new batch widens the range, the old histogram is re-binned onto the wider one: each
    old bin is spread evenly over `upsample_rate` sub-bins, which are then summed into the new
    bins (_combine_histograms)."""

    def __init__(self, bins=2048, upsample_rate=128, dtype=_types.quint8,
                 qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 eps=_FLOAT32_EPS):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        if not isinstance(bins, int) or bins < 1:
            raise ValueError(f"[HistogramObserver] bins must be a positive int; got {bins!r}")
        if not isinstance(upsample_rate, int) or upsample_rate < 1:
            raise ValueError("[HistogramObserver] upsample_rate must be a positive int; got "
                             f"{upsample_rate!r}")
        self.bins = bins
        self.upsample_rate = upsample_rate
        self.dst_nbins = 256  # 2 ** bits of the 8-bit target, whatever quant_min/quant_max are
        self.register_buffer("histogram", wick.zeros(bins))
        self.register_buffer("min_val", wick.tensor(float("inf")))
        self.register_buffer("max_val", wick.tensor(float("-inf")))

    # ---- accumulating ----

    def forward(self, x_orig):
        self._check_input(x_orig, "HistogramObserver")
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(wick.float32)
        min_val, max_val = self.min_val, self.max_val
        uninitialized = math.isinf(min_val.item()) and math.isinf(max_val.item())
        if uninitialized or min_val.item() == max_val.item():
            self.min_val, self.max_val = x.min(), x.max()
            self.histogram = wick.histc(x, self.bins, min=self.min_val.item(),
                                        max=self.max_val.item())
            return x_orig
        combined_min = wick.minimum(x.min(), min_val)
        combined_max = wick.maximum(x.max(), max_val)
        combined_min, combined_max, downsample_rate, start_idx = self._adjust_min_max(
            combined_min, combined_max, self.upsample_rate)
        combined = wick.histc(x, self.bins, min=combined_min.item(), max=combined_max.item())
        if combined_min.item() == min_val.item() and combined_max.item() == max_val.item():
            combined = combined + self.histogram
        else:
            combined = self._combine_histograms(combined, self.histogram, self.upsample_rate,
                                                downsample_rate, start_idx, self.bins)
        self.histogram, self.min_val, self.max_val = combined, combined_min, combined_max
        return x_orig

    def _adjust_min_max(self, combined_min, combined_max, upsample_rate):
        # The combined range becomes a whole number (downsample_rate) of old ranges divided by
        # upsample_rate, so old sub-bins line up with new bins; only the max is relaxed.
        hist_bin_width = (self.max_val - self.min_val) / (self.bins * upsample_rate)
        downsample_rate = int(math.ceil(
            ((combined_max - combined_min) / (self.bins * hist_bin_width)).item()))
        e = downsample_rate * (self.bins * hist_bin_width) - (combined_max - combined_min)
        combined_max = combined_max + e
        start_idx = int(wick.round((self.min_val - combined_min) / hist_bin_width).item())
        return combined_min, combined_max, downsample_rate, start_idx

    @staticmethod
    def _combine_histograms(orig_hist, new_hist, upsample_rate, downsample_rate, start_idx,
                            nbins):
        upsampled = new_hist.repeat_interleave(upsample_rate)
        with_range = wick.zeros(nbins * downsample_rate)
        with_range[start_idx:nbins * upsample_rate + start_idx] = upsampled
        integral = wick.cumsum(with_range, 0, dtype=wick.float64)
        integral = integral.reshape(nbins, downsample_rate)[:, downsample_rate - 1]
        shifted = wick.zeros(nbins, dtype=wick.float64)
        shifted[1:nbins] = integral[0:-1]
        interpolated = (integral - shifted) / upsample_rate
        return orig_hist + interpolated.to(wick.float32)

    # ---- the L2 search ----

    @staticmethod
    def _get_norm(delta_begin, delta_end, density):
        # density * integral of x^2 from delta_begin to delta_end
        return density * (delta_end * delta_end * delta_end
                          - delta_begin * delta_begin * delta_begin) / 3

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        """The L2 error of quantizing the histogram's mass to dst_nbins levels spread over bins
        [next_start_bin, next_end_bin] (mass outside is clipped to the ends)."""
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = wick.arange(self.bins, dtype=wick.float32)
        src_bin_begin = (src_bin - next_start_bin) * bin_width
        src_bin_end = src_bin_begin + bin_width
        last = self.dst_nbins - 1
        dst_of_begin = wick.clamp(wick.floor(src_bin_begin / dst_bin_width), 0, last)
        dst_of_begin_center = (dst_of_begin + 0.5) * dst_bin_width
        dst_of_end = wick.clamp(wick.floor(src_bin_end / dst_bin_width), 0, last)
        density = self.histogram / bin_width
        half = dst_bin_width / 2
        norm = self._get_norm(src_bin_begin - dst_of_begin_center,
                              wick.full((self.bins,), half), density)
        norm = norm + (dst_of_end - dst_of_begin - 1) * self._get_norm(
            wick.tensor(-half), wick.tensor(half), density)
        dst_of_end_center = dst_of_end * dst_bin_width + half
        norm = norm + self._get_norm(wick.tensor(-half), src_bin_end - dst_of_end_center, density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        """Walks the clipping range in from both ends in quantile steps of 1e-5, moving whichever
        end frees more bins, while the L2 error keeps falling."""
        bin_width = (self.max_val - self.min_val) / self.bins
        total = self.histogram.sum().item()
        csum = wick.cumsum(self.histogram, 0).tolist()
        stepsize, alpha, beta = 1e-5, 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            lo_target, hi_target = _f32(next_alpha * total), _f32(next_beta * total)
            left, right = start_bin, end_bin
            while left < end_bin and csum[left] < lo_target:
                left += 1
            while right > start_bin and csum[right] > hi_target:
                right -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start_bin, alpha = left, next_alpha
            else:
                next_end_bin, beta = right, next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start_bin, next_end_bin
        new_min = self.min_val + bin_width * start_bin
        new_max = self.min_val + bin_width * (end_bin + 1)
        return new_min, new_max

    def calculate_qparams(self):
        if math.isinf(self.min_val.item()) and math.isinf(self.max_val.item()):
            return self._calculate_qparams(self.min_val, self.max_val)  # warns, (1, 0)
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self):
        return f"bins={self.bins}, min_val={self.min_val.item()}, " \
               f"max_val={self.max_val.item()}, " + self._repr_qparams()


class PercentileObserver(ObserverBase):
    """Clips at percentiles of everything seen: min_val is the (100 - percentile)-th percentile
    and max_val the percentile-th (99.99 by default), so the few largest activations saturate
    instead of setting the scale (the "percentile" calibration of NVIDIA's pytorch-quantization
    toolkit; PyTorch has no such observer). It keeps an exact histogram like HistogramObserver's (bins over the running
    range, re-binned when the range grows) and reads the percentiles off its cumulative sum,
    interpolating within a bin."""

    def __init__(self, percentile=99.99, bins=2048, upsample_rate=128, dtype=_types.quint8,
                 qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 eps=_FLOAT32_EPS):
        if not (isinstance(percentile, (int, float)) and 50 < percentile <= 100):
            raise ValueError(f"[PercentileObserver] percentile must be in (50, 100]; got "
                             f"{percentile!r}")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.percentile = float(percentile)
        self._hist = HistogramObserver(bins, upsample_rate, dtype, qscheme, reduce_range,
                                       quant_min, quant_max, eps)

    @property
    def min_val(self):
        return self._hist.min_val

    @property
    def max_val(self):
        return self._hist.max_val

    def forward(self, x_orig):
        self._check_input(x_orig, "PercentileObserver")
        return self._hist(x_orig)

    def _percentile_range(self):
        h = self._hist
        lo, hi = h.min_val.item(), h.max_val.item()
        counts = h.histogram.tolist()
        total = sum(counts)
        if total == 0 or lo == hi:
            return lo, hi
        width = (hi - lo) / len(counts)

        def value_at(fraction):
            target, acc = fraction * total, 0.0
            for i, c in enumerate(counts):
                if c > 0 and acc + c >= target:
                    return lo + width * (i + (target - acc) / c)
                acc += c
            return hi

        clip = (100.0 - self.percentile) / 100.0
        return value_at(clip), value_at(1.0 - clip)

    def calculate_qparams(self):
        if not self.has_observed():
            return self._calculate_qparams(self.min_val, self.max_val)  # warns, (1, 0)
        lo, hi = self._percentile_range()
        return self._calculate_qparams(wick.tensor(lo), wick.tensor(hi))

    def extra_repr(self):
        return f"percentile={self.percentile}, " + self._repr_qparams()


class PlaceholderObserver(ObserverBase):
    """Records nothing; stands where a dtype is needed but no qparams are (float16, dynamic)."""

    def __init__(self, dtype=_types.quint8):
        super().__init__(dtype)

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise RuntimeError("[PlaceholderObserver] has no quantization parameters")


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=_types.qint8,
                                                   qscheme=per_tensor_symmetric)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=_types.qint8, qscheme=per_channel_symmetric)
