"""Embedding and EmbeddingBag (torch.nn.modules.sparse): a lookup table of vectors (F.embedding:
index_select with autograd), and sums, means or maxima of bags of its rows without materialising
the per-index rows for the caller (F.embedding_bag)."""

import wick
from wick.nn import functional as F
from wick.nn import init
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter
from wick.nn.modules import _args


class _Table(Module):
    """The lookup table Embedding and EmbeddingBag share: the checked sizes and padding row, the
    weight (given, or drawn from N(0, 1) with the padding row zeroed) and its repr."""

    def _init_table(self, num_embeddings, embedding_dim, padding_idx, max_norm,
                    scale_grad_by_freq, sparse, _weight, device, dtype, padding_error):
        layer = type(self).__name__
        num_embeddings = _args.size(layer, "num_embeddings", num_embeddings)
        embedding_dim = _args.size(layer, "embedding_dim", embedding_dim)
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise ValueError(f"{layer}: max_norm, scale_grad_by_freq and sparse are not "
                             "supported")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise padding_error
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(wick.empty(num_embeddings, embedding_dim, device=device,
                                               dtype=dtype))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with wick.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def _table_repr(self, more=""):
        s = f"{self.num_embeddings}, {self.embedding_dim}{more}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


class Embedding(_Table):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 device=None, dtype=None):
        super().__init__()
        self._init_table(num_embeddings, embedding_dim, padding_idx, max_norm,
                         scale_grad_by_freq, sparse, _weight, device, dtype,
                         ValueError(f"[Embedding] padding_idx {padding_idx} must be within "
                                    f"num_embeddings ({num_embeddings})"))

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        return self._table_repr()


class EmbeddingBag(_Table):
    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"mode has to be one of sum, mean or max; got {mode!r}")
        self._init_table(num_embeddings, embedding_dim, padding_idx, max_norm,
                         scale_grad_by_freq, sparse, _weight, device, dtype,
                         AssertionError("padding_idx must be within num_embeddings"))
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        return self._table_repr(f", mode={self.mode}")
