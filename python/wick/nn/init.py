"""wick.nn.init: parameter initialisation in place (torch.nn.init), run by the C++ functions of
nn/init.h. Each takes the tensor (a Parameter usually) and returns it."""

import functools
import warnings

from wick import _C

_nn = _C._nn


def _skip_empty(init):
    """PyTorch's rule for the fan-based initialisers: a tensor with no elements (Linear(0, 4))
    has no fan to scale by, and initialising it is a no-op with a warning, not an error."""

    @functools.wraps(init)
    def wrapper(tensor, *args, **kwargs):
        if tensor.numel() == 0:
            warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
            return tensor
        return init(tensor, *args, **kwargs)

    return wrapper

uniform_ = _nn.uniform_
normal_ = _nn.normal_
constant_ = _nn.constant_
zeros_ = _nn.zeros_
ones_ = _nn.ones_
xavier_uniform_ = _skip_empty(_nn.xavier_uniform_)
xavier_normal_ = _skip_empty(_nn.xavier_normal_)
kaiming_uniform_ = _skip_empty(_nn.kaiming_uniform_)
kaiming_normal_ = _skip_empty(_nn.kaiming_normal_)
calculate_gain = _nn.calculate_gain
_calculate_fan_in_and_fan_out = _nn.calculate_fan_in_and_fan_out


def _fan_in_uniform_(weight, bias):
    """How Linear and the convolutions initialise (PyTorch's reset_parameters for both, and
    nn::init::fan_in_uniform_ in C++): the weight Kaiming-uniform with a = sqrt(5), the bias
    uniform in +-1/sqrt(fan_in)."""
    import math

    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
