"""wick.nn.init: parameter initialisation in place (torch.nn.init), run by the C++ functions of
nn/init.h. Each takes the tensor (a Parameter usually) and returns it."""

from wick import _C

_nn = _C._nn

uniform_ = _nn.uniform_
normal_ = _nn.normal_
constant_ = _nn.constant_
zeros_ = _nn.zeros_
ones_ = _nn.ones_
xavier_uniform_ = _nn.xavier_uniform_
xavier_normal_ = _nn.xavier_normal_
kaiming_uniform_ = _nn.kaiming_uniform_
kaiming_normal_ = _nn.kaiming_normal_
calculate_gain = _nn.calculate_gain
_calculate_fan_in_and_fan_out = _nn.calculate_fan_in_and_fan_out
