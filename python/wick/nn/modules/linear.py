"""Identity, Linear and NonDynamicallyQuantizableLinear (torch.nn.modules.linear): y = x W^T + b,
the math is F.linear, in C++."""

import wick
from wick.nn import functional as F
from wick.nn import init
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter
from wick.nn.modules import _args


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b with W [out_features, in_features], initialised as PyTorch does (uniform in
    +-1/sqrt(in_features) for W and b)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = _args.size("Linear", "in_features", in_features)
        self.out_features = _args.size("Linear", "out_features", out_features)
        self.weight = Parameter(wick.empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(wick.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init._fan_in_uniform_(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A plain Linear under PyTorch's name for MultiheadAttention's output projection: PyTorch
    keeps the class so that dynamic quantization passes it by, and code and pickles name it."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
