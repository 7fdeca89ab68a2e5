"""wick.backends.cuda: cuBLAS's math mode (torch.backends.cuda)."""

from wick import _C
from wick.backends._flags import flag_property


class _MatmulFlags:
    """wick.backends.cuda.matmul"""

    allow_tf32 = flag_property(
        _C._cuda.allow_tf32, _C._cuda.set_allow_tf32,
        "Lets float32 matmuls round their inputs to TF32 (10-bit mantissas) on tensor cores, "
        "several times faster; off by default, as in PyTorch.")


matmul = _MatmulFlags()


def is_built():
    """True when wick was built with CUDA (whether or not a GPU is present)."""
    return _C._cuda.is_built()
