"""linear: y = x W^T + b, the C++ function bound with PyTorch's signature."""

from wick import _C

_nn = _C._nn


linear = _nn.linear
