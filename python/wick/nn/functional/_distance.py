"""pairwise_distance and cosine_similarity, the C++ functions bound with PyTorch's signatures."""

from wick import _C

_nn = _C._nn


pairwise_distance = _nn.pairwise_distance
cosine_similarity = _nn.cosine_similarity
