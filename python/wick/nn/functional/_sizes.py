"""Size arguments in PyTorch's forms, shared by the 1-D convolution and pooling wrappers."""


def _single(op, name, value):
    """A 1-D size: an int or a tuple/list of one int, as PyTorch's _single."""
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(f"[{op}] {name} must be an int or a tuple of one int; got "
                               f"{tuple(value)}")
        value = value[0]
    return int(value)
