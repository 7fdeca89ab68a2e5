"""embedding (rows of a weight picked by index), embedding_bag (sums, means or maxima of bags of
rows) and one_hot. The math is C++; the wrappers refuse what wick does not support (max_norm,
sparse gradients) and check what PyTorch checks in Python, with its exception types."""

import numbers

from wick import _C

_nn = _C._nn


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise ValueError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    if padding_idx is not None and weight.dim() == 2:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:  # PyTorch asserts this; -1 wrapped is the last row
            raise ValueError(f"[embedding] padding_idx {padding_idx} must be within "
                             f"num_embeddings ({rows})")
    return _nn.embedding(input, weight, padding_idx)


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise ValueError("[embedding_bag] max_norm, scale_grad_by_freq and sparse are not "
                         "supported")
    if mode not in _BAG_MODES:
        raise ValueError(f"mode has to be one of sum, mean or max; got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            f"GitHub.")
    rows = weight.shape[0] if weight.dim() == 2 else 0
    if padding_idx is None:
        padding_idx = -1
    elif not isinstance(padding_idx, numbers.Integral) or not -rows <= padding_idx < rows:
        raise ValueError(f"[embedding_bag] padding_idx {padding_idx} must be within "
                         f"num_embeddings ({rows})")
    elif padding_idx < 0:
        padding_idx += rows
    return _nn.embedding_bag(input, weight, offsets, mode, per_sample_weights,
                             include_last_offset, padding_idx)


one_hot = _nn.one_hot
