"""The pooling functions of wick.nn.functional, C++ kernels: max, average and adaptive pooling in
1-D and 2-D. The wrappers accept PyTorch's argument forms (an int or a one-element tuple for 1-D
sizes, a None stride meaning the kernel size, None in an adaptive output size keeping that input
size)."""

from wick import _C
from wick.nn.functional._sizes import _single

_nn = _C._nn


def _stride_or_kernel(op, stride, kernel):
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        return kernel
    return _single(op, "stride", stride)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _nn.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode,
                          return_indices)


avg_pool2d = _nn.avg_pool2d
adaptive_avg_pool2d = _nn.adaptive_avg_pool2d


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
