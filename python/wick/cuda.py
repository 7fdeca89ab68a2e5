"""wick.cuda: whether a CUDA device is there (torch.cuda). In a CPU-only build is_available() is
False, and moving a tensor to "cuda" raises the library's RuntimeError saying so."""

from wick import _C


def is_available():
    return _C._cuda_is_available()


def device_count():
    return _C._cuda_device_count()
