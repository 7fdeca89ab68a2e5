"""TransformerEncoderLayer and TransformerEncoder (torch.nn's), with PyTorch's submodule names, so
a torch state_dict loads as it is (self_attn.in_proj_weight, linear1.weight, layers.0.norm1...)."""

import copy

import wick
from wick.nn import functional as F
from wick.nn.modules import _args
from wick.nn.modules.attention import MultiheadAttention
from wick.nn.modules.container import ModuleList
from wick.nn.modules.dropout import Dropout
from wick.nn.modules.linear import Linear
from wick.nn.modules.module import Module
from wick.nn.modules.normalization import LayerNorm


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__()
        name = type(self).__name__
        _args.size(name, "dim_feedforward", dim_feedforward, 1)
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        num_layers = _args.size(type(self).__name__, "num_layers", num_layers)
        # Deep copies, as PyTorch makes: the layers start equal but do not share parameters.
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None):
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """Only the static helper of torch.nn.Transformer; the encoder-decoder model itself is not
    implemented (TransformerDecoder is missing)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("wick.nn.Transformer (the encoder-decoder model) is not "
                                  "implemented; use TransformerEncoder")

    @staticmethod
    def generate_square_subsequent_mask(sz, device="cpu"):
        """[sz, sz] float: -inf above the diagonal, 0 elsewhere (position i sees j <= i)."""
        idx = wick.arange(sz, device=device)
        above = idx.unsqueeze(0) > idx.unsqueeze(1)
        return wick.zeros((sz, sz), device=device).masked_fill(above, float("-inf"))
