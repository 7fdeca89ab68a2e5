"""wick.backends.mps: Apple's Metal backend, which wick does not have. PyTorch's own examples ask
`torch.backends.mps.is_available()` before anything else, so the answer is here: no."""


def is_available():
    return False


def is_built():
    return False
