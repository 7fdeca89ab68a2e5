"""wick.nn.utils: gradient clipping and variable-length sequences (torch.nn.utils)."""

import math

from wick import _C
from wick.nn.utils import rnn  # noqa: F401  rnn: pack/pad sequences


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Rescales the gradients of parameters so that their joint norm is at most max_norm, and
    returns the total norm they had (nn/clip_grad.h)."""
    if isinstance(norm_type, str):
        if norm_type != "inf":
            raise ValueError(f"[clip_grad_norm_] norm_type must be a number or 'inf'; got "
                             f"{norm_type!r}")
        norm_type = math.inf
    if not isinstance(parameters, _C.Tensor):
        parameters = list(parameters)
    return _C._nn.clip_grad_norm_(parameters, float(max_norm), float(norm_type),
                                  error_if_nonfinite)


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient into [-clip_value, clip_value], in place."""
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    for p in parameters:
        if p.grad is not None:
            p.grad.clamp_(-clip_value, clip_value)
