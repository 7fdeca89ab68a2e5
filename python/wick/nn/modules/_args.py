"""Argument checks shared by the layer constructors. Bad input gets a clear exception, never a
crash or a silent wrong answer: a wrong type or value is reported naming the layer and the
argument, not by whatever operation first trips over it ("not all arguments converted during
string formatting", "[empty] negative dimension")."""

import numbers


def size(layer, name, value, minimum=0):
    """An integer argument (a size, a count) of at least `minimum`; returns it as an int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"[{layer}] {name} must be an int; got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"[{layer}] {name} must be at least {minimum}; got {value}")
    return int(value)


def sizes(layer, name, values, minimum=0):
    """A tuple of integer arguments (kernel_size, stride, ...), each at least `minimum`."""
    return tuple(size(layer, name, v, minimum) for v in values)


def real(layer, name, value, low=None, high=None):
    """A real number argument in [low, high] (bounds optional); returns it as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"[{layer}] {name} must be a number; got {type(value).__name__} {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"[{layer}] {name} must be in [{low}, {high}]; got {value}")
    return float(value)
