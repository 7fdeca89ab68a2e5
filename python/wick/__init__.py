"""wick: a small deep-learning framework written to be read, with PyTorch's Python API.

For everything wick has, the names, signatures and behaviour are PyTorch's, so PyTorch code runs
on wick by changing its imports:

    import wick
    import wick.nn as nn
    import wick.nn.functional as F

The C++ core (tensors, autograd, layers, optimizers, data loading) lives in the extension module
wick._C; this package arranges it under PyTorch's module layout and adds what is naturally Python
(nn.Module, which Python code subclasses, the Python DataLoader, no_grad, ...).
"""

# The extension module is built into <build>/python/wick/, a second folder for this package:
# extend_path joins every wick/ folder on sys.path, so `wick._C` is found there when running
# from a build tree (tests/python/conftest.py puts both folders on sys.path). An installed
# package has _C next to this file.
import pkgutil as _pkgutil

__path__ = _pkgutil.extend_path(__path__, __name__)

import builtins as _builtins
import collections as _collections

from wick import _C
from wick._C import *  # noqa: F401,F403  tensors, dtypes, devices, creation and math functions
from wick._C import (  # noqa: F401  named explicitly for readers and linters
    Tensor,
    device,
    dtype,
    OutOfMemoryError,
    get_num_threads,
    set_num_threads,
    is_grad_enabled,
)

__version__ = "0.1.0"


class Size(tuple):
    """The shape of a tensor: a tuple of ints (torch.Size)."""

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def __repr__(self):
        return f"wick.Size({list(self)})"


_C._set_size_class(Size)
_C._set_values_indices_class(_collections.namedtuple("values_indices", ["values", "indices"]))

# PyTorch's alternative dtype names.
float = float32  # noqa: A001,F405
double = float64  # noqa: F405
half = float16  # noqa: F405
long = int64  # noqa: F405
int = int32  # noqa: A001,F405
# `bool` is wick.bool (from _C), as torch.bool is; the builtin stays reachable as _builtins.bool.


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def numel(input):
    return input.numel()


def seed():
    """Seeds the default generator non-deterministically and returns the seed."""
    import random

    s = random.SystemRandom().getrandbits(63)
    manual_seed(s)  # noqa: F405
    return s


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def squeeze(input, dim=None):
    return input.squeeze(dim)


def unsqueeze(input, dim):
    return input.unsqueeze(dim)


def transpose(input, dim0, dim1):
    return input.transpose(dim0, dim1)


def detach(input):
    return input.detach()


def clone(input):
    return input.clone()


# Submodules, imported last: they use the names above.
from wick import amp  # noqa: E402
from wick.amp import autocast  # noqa: E402,F401
from wick import autograd  # noqa: E402
from wick.autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402,F401
from wick import backends  # noqa: E402
from wick import cuda  # noqa: E402
from wick import distributed  # noqa: E402
from wick import nn  # noqa: E402
from wick import optim  # noqa: E402
from wick import utils  # noqa: E402
from wick import datasets  # noqa: E402
from wick import transforms  # noqa: E402
from wick import records  # noqa: E402
from wick import keras  # noqa: E402
from wick import jit  # noqa: E402
from wick.jit import compile  # noqa: E402,F401,A001  torch.compile's name
from wick import func  # noqa: E402
from wick import memory  # noqa: E402
from wick.serialization import load, save  # noqa: E402,F401

del _builtins
