"""Conv2d: 2-D convolution (cross-correlation) over [N, C, H, W] inputs; the math is
F.conv2d, a C++ kernel with its own backward."""

import math

import wick
from wick.nn import functional as F
from wick.nn import init
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter
from wick.nn.modules import _args


def _pair(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x, x)


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
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

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
