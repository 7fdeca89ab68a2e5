"""The convolutions (torch.nn.modules.conv): Conv2d, Conv1d and ConvTranspose2d over
[N, C, (H,) W] inputs. The math is C++: F.conv2d, a kernel with its own backward; F.conv1d,
conv2d over a height-1 image; F.conv_transpose2d, conv2d's input gradient.

Note [two convolution constructors]: Conv2d has a constructor of its own, the simplest to read
(zeros padding only, no output_padding); Conv1d and ConvTranspose2d share _ConvBase, which
follows PyTorch's _ConvNd (padding modes, output_padding, the transposed weight layout). Both
initialise as _ConvNd does, so state_dicts and seeded initialisations match PyTorch's."""

import wick
from wick.nn import functional as F
from wick.nn import init
from wick.nn.modules import _args
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter


def _tuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


def _pair(x):
    return _tuple(x, 2)


class Conv2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        in_channels = _args.size("Conv2d", "in_channels", in_channels, 1)
        out_channels = _args.size("Conv2d", "out_channels", out_channels, 1)
        groups = _args.size("Conv2d", "groups", groups, 1)
        _args.sizes("Conv2d", "kernel_size", _pair(kernel_size), 1)
        _args.sizes("Conv2d", "stride", _pair(stride), 1)
        _args.sizes("Conv2d", "dilation", _pair(dilation), 1)
        if not isinstance(padding, str):
            _args.sizes("Conv2d", "padding", _pair(padding), 0)
        if in_channels % groups != 0 or out_channels % groups != 0:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise ValueError("Conv2d: only padding_mode='zeros' is supported")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(wick.empty(out_channels, in_channels // groups, *self.kernel_size,
                                           device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(wick.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init._fan_in_uniform_(self.weight, self.bias)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class _ConvBase(Module):
    def _setup(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
               bias, padding_mode, output_padding, transposed, n, device, dtype):
        name = type(self).__name__
        in_channels = _args.size(name, "in_channels", in_channels, 1)
        out_channels = _args.size(name, "out_channels", out_channels, 1)
        groups = _args.size(name, "groups", groups, 1)
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                             f"'circular'], but got padding_mode='{padding_mode}'")
        if transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _args.sizes(name, "kernel_size", _tuple(kernel_size, n), 1)
        self.stride = _args.sizes(name, "stride", _tuple(stride, n), 1)
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _args.sizes(name, "padding", _tuple(padding, n), 0)
        self.dilation = _args.sizes(name, "dilation", _tuple(dilation, n), 1)
        self.output_padding = _args.sizes(name, "output_padding", _tuple(output_padding, n), 0)
        self.transposed = transposed
        self.groups = groups
        self.padding_mode = padding_mode
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(wick.empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(wick.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's _ConvNd: fan_in comes from the weight's dim 1 and kernel, for the
        # transposed convolution too.
        init._fan_in_uniform_(self.weight, self.bias)

    def extra_repr(self):
        n = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvBase):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        self._setup(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                    bias, padding_mode, 0, False, 1, device, dtype)

    def forward(self, input):
        padding = self.padding if isinstance(self.padding, str) else self.padding[0]
        if self.padding_mode != "zeros":
            # As PyTorch: pad with the mode first, then convolve without padding.
            if padding == "same":
                total = self.dilation[0] * (self.kernel_size[0] - 1)
                amounts = (total // 2, total - total // 2)
            else:
                amounts = (0, 0) if padding == "valid" else (padding, padding)
            input = F.pad(input, amounts, mode=self.padding_mode)
            padding = 0
        return F.conv1d(input, self.weight, self.bias, self.stride[0], padding,
                        self.dilation[0], self.groups)


class ConvTranspose2d(_ConvBase):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        if isinstance(padding, str):
            raise ValueError("ConvTranspose2d: padding must be ints, not a string")
        self._setup(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                    bias, padding_mode, output_padding, True, 2, device, dtype)

    def _output_padding(self, input, output_size):
        """output_size (the last two entries) picks output_padding, as PyTorch's."""
        if output_size is None:
            return self.output_padding
        output_size = list(output_size)[-2:]
        result = []
        for d in range(2):
            in_size = input.shape[input.dim() - 2 + d]
            smallest = ((in_size - 1) * self.stride[d] - 2 * self.padding[d] +
                        self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            extra = output_size[d] - smallest
            if extra < 0 or extra >= max(self.stride[d], self.dilation[d]):
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{smallest} to {smallest + max(self.stride[d], self.dilation[d]) - 1} "
                    f"(for an input of {list(input.shape[-2:])})")
            result.append(extra)
        return tuple(result)

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)
