"""wick.backends.cudnn: how wick uses cuDNN (torch.backends.cudnn).

    wick.backends.cudnn.enabled = False    # softmax, average pooling, batch norm: hand-written

    wick.backends.cudnn.benchmark = True   # time the candidate algorithms of each new shape
    wick.backends.cudnn.allow_tf32 = False # exact float32 convolutions (TF32 is on by default)

Assigning to this module's attributes sets the C++ flags (cuda/api.h): the module's class is
swapped for one with properties, as torch.backends.cudnn does.
"""

import sys
import types

from wick import _C
from wick.backends._flags import flag_property


class _CudnnModule(types.ModuleType):
    enabled = flag_property(
        _C._cuda.cudnn_enabled, _C._cuda.set_cudnn_enabled,
        "Run softmax, average pooling and batch norm through cuDNN on the GPU (on by default); "
        "off, wick's hand-written CUDA kernels run. Convolutions always use cuDNN.")
    benchmark = flag_property(
        _C._cuda.cudnn_benchmark, _C._cuda.set_cudnn_benchmark,
        "Time the candidate convolution algorithms of each new shape and keep the fastest.")
    allow_tf32 = flag_property(
        _C._cuda.cudnn_allow_tf32, _C._cuda.set_cudnn_allow_tf32,
        "Let float32 convolutions use TF32 tensor cores (on by default, as in PyTorch).")


def version():
    """cuDNN's version as a number (e.g. 91900 for 9.19.0), or None when it is not loaded."""
    return _C._cuda.cudnn_version() or None


def is_available():
    return version() is not None


sys.modules[__name__].__class__ = _CudnnModule
