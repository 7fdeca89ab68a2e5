"""The convolutions of wick.nn.functional: conv2d, conv1d (conv2d over a height-1 image),
conv_transpose2d (conv2d's input gradient), and unfold / fold (im2col and col2im). The math is
C++; conv1d's wrapper accepts PyTorch's argument forms (an int or a one-element tuple, the
'valid' and 'same' padding strings)."""

from wick import _C
from wick.nn.functional._resample import pad
from wick.nn.functional._sizes import _single

_nn = _C._nn


conv2d = _nn.conv2d


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
unfold = _nn.unfold
fold = _nn.fold
