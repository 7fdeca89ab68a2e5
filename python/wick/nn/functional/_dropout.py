"""dropout and dropout2d: in training, zero elements (or whole channels) with probability p and
scale the rest by 1/(1-p). The masks are drawn in C++."""

from wick import _C

_nn = _C._nn


dropout = _nn.dropout


def _maybe_inplace(input, result, inplace):
    if not inplace:
        return result
    input.copy_(result)
    return input


def dropout2d(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _maybe_inplace(input, _nn.dropout2d(input, p, training), inplace)
