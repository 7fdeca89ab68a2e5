"""wick.nn.functional: the layers and losses as functions, with PyTorch's signatures
(torch.nn.functional). The math is C++ (wick._C._nn and wick._C._attention); the hot functions
are the C++ functions themselves, the rest are thin wrappers that accept PyTorch's argument forms
and raise its exception types where it checks in Python. Each kind has a file of its own here.

Note [functional's private files]: the files are named _conv, _dropout, ... with an underscore
because several kinds share their name with one of their functions (dropout, linear, embedding):
a public submodule `dropout` and the function `dropout` would fight over the attribute
wick.nn.functional.dropout, and which one `import wick.nn.functional.dropout` gave would
depend on import order. The API is this module's names, as torch.nn.functional's is one module's;
so each Python function here says it belongs to wick.nn.functional (its __module__), and pickles,
reprs and docs name it there, whichever file defines it."""

from wick.nn.functional._activation import (  # noqa: F401
    elu, gelu, hardsigmoid, hardswish, hardtanh, leaky_relu, log_softmax, mish, relu, relu6, selu,
    sigmoid, silu, softmax, softplus, tanh)
from wick.nn.functional._attention import (  # noqa: F401
    multi_head_attention_forward, scaled_dot_product_attention)
from wick.nn.functional._conv import conv1d, conv2d, conv_transpose2d, fold, unfold  # noqa: F401
from wick.nn.functional._distance import cosine_similarity, pairwise_distance  # noqa: F401
from wick.nn.functional._dropout import dropout, dropout2d  # noqa: F401
from wick.nn.functional._embedding import embedding, embedding_bag, one_hot  # noqa: F401
from wick.nn.functional._linear import linear  # noqa: F401
from wick.nn.functional._loss import (  # noqa: F401
    binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, huber_loss, kl_div,
    l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from wick.nn.functional._normalization import (  # noqa: F401
    batch_norm, batch_norm_relu, group_norm, instance_norm, layer_norm, normalize)
from wick.nn.functional._pooling import (  # noqa: F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices, avg_pool1d, avg_pool2d, max_pool1d, max_pool1d_with_indices,
    max_pool2d)
from wick.nn.functional._resample import (  # noqa: F401
    interpolate, pad, pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear,
    upsample_nearest)


def _claim_functions():
    """Note [functional's private files]: the Python functions defined in this package's files
    name wick.nn.functional as their module; the C++ ones keep wick._C's."""
    for value in list(globals().values()):
        module = getattr(value, "__module__", None) or ""
        if callable(value) and module.startswith(__name__ + "._"):
            value.__module__ = __name__


_claim_functions()
