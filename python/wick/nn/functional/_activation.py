"""The activations and softmaxes of wick.nn.functional. relu, gelu and the other pointwise
activations are the C++ functions themselves, bound with PyTorch's signatures."""

from wick import _C

_nn = _C._nn


relu = _nn.relu
silu = _nn.silu
leaky_relu = _nn.leaky_relu
gelu = _nn.gelu
elu = _nn.elu
selu = _nn.selu
softplus = _nn.softplus
mish = _nn.mish
hardtanh = _nn.hardtanh
relu6 = _nn.relu6
hardswish = _nn.hardswish
hardsigmoid = _nn.hardsigmoid


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        raise ValueError("softmax: pass dim explicitly (implicit dim choice is deprecated)")
    return input.softmax(dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        raise ValueError("log_softmax: pass dim explicitly (implicit dim choice is deprecated)")
    return input.log_softmax(dim, dtype)
