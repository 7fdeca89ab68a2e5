"""LayerNorm and GroupNorm (torch.nn.modules.normalization): normalisation over the last dims of
each sample (F.layer_norm) and over groups of channels (F.group_norm)."""

import numbers

import wick
from wick.nn import functional as F
from wick.nn import init
from wick.nn.modules import _args
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(wick.empty(self.normalized_shape, device=device, dtype=dtype))
            self.bias = Parameter(wick.empty(self.normalized_shape, device=device, dtype=dtype))
            init.ones_(self.weight)
            init.zeros_(self.bias)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        num_groups = _args.size("GroupNorm", "num_groups", num_groups, 1)
        num_channels = _args.size("GroupNorm", "num_channels", num_channels, 1)
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(wick.empty(num_channels, device=device, dtype=dtype))
            self.bias = Parameter(wick.empty(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
