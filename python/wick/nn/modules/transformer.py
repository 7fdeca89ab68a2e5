"""torch.nn's Transformer family: TransformerEncoderLayer, TransformerEncoder,
TransformerDecoderLayer, TransformerDecoder and the encoder-decoder Transformer, with PyTorch's
submodule names, so a torch state_dict loads as it is (self_attn.in_proj_weight, linear1.weight,
decoder.layers.0.norm3...).

The is_causal arguments of PyTorch 2.x are hints that the mask given is the causal one (PyTorch may
then pick a faster kernel); the mask is what counts, so wick accepts the hint and uses the mask,
and, like PyTorch, refuses the hint without a mask."""

import copy
import numbers

import wick
from wick.nn import functional as F
from wick.nn import init
from wick.nn.modules import _args
from wick.nn.modules.activation import MultiheadAttention
from wick.nn.modules.container import ModuleList
from wick.nn.modules.dropout import Dropout
from wick.nn.modules.linear import Linear
from wick.nn.modules.module import Module
from wick.nn.modules.normalization import LayerNorm


def _check_causal_hint(layer, is_causal, mask, mask_name):
    if is_causal and mask is None:
        raise RuntimeError(f"[{layer}] is_causal=True is a hint that {mask_name} is the causal "
                           f"mask, so it needs {mask_name}; pass "
                           "Transformer.generate_square_subsequent_mask(sequence_length)")


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: self-attention, a second attention over the
    encoder's output (the decoder only), the feed-forward block, and one layer norm and one
    dropout per block. Submodules are registered in PyTorch's order, so state_dict keys match."""

    def __init__(self, blocks, d_model, nhead, dim_feedforward, dropout, activation,
                 layer_norm_eps, batch_first, norm_first, device, dtype):
        super().__init__()
        _args.size(type(self).__name__, "dim_feedforward", dim_feedforward, 1)
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, **factory)
        if blocks == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                     batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **factory)
        self.norm_first = norm_first
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, **factory))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _feed_forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_TransformerLayer):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__(2, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                         batch_first, norm_first, device, dtype)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        _check_causal_hint(type(self).__name__, is_causal, src_mask, "src_mask")
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x))

    def _ff_block(self, x):
        return self.dropout2(self._feed_forward(x))


class TransformerEncoder(Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        num_layers = _args.size(type(self).__name__, "num_layers", num_layers)
        # Deep copies, as PyTorch makes: the layers start equal but do not share parameters.
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        _check_causal_hint(type(self).__name__, is_causal, mask, "mask")
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention over the target, attention from the target to the encoder's output
    (memory), then the feed-forward block; each with a residual connection and layer norm."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__(3, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                         batch_first, norm_first, device, dtype)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        name = type(self).__name__
        _check_causal_hint(name, tgt_is_causal, tgt_mask, "tgt_mask")
        _check_causal_hint(name, memory_is_causal, memory_mask, "memory_mask")
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x))

    def _mha_block(self, x, memory, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self._feed_forward(x))


class TransformerDecoder(Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        num_layers = _args.size(type(self).__name__, "num_layers", num_layers)
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        name = type(self).__name__
        _check_causal_hint(name, tgt_is_causal, tgt_mask, "tgt_mask")
        _check_causal_hint(name, memory_is_causal, memory_mask, "memory_mask")
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need": the encoder reads src, the
    decoder reads tgt and attends to the encoder's output. Weight matrices are re-drawn from
    Xavier-uniform after construction, as PyTorch's _reset_parameters does."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        layer = {"dim_feedforward": dim_feedforward, "dropout": dropout,
                 "activation": activation, "layer_norm_eps": layer_norm_eps,
                 "batch_first": batch_first, "norm_first": norm_first, **factory}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, **factory))
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError(f"[Transformer] the batch number of src and tgt must be equal; "
                               f"got {src.size(batch_dim)} and {tgt.size(batch_dim)}")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError(f"[Transformer] the feature number of src and tgt must be equal "
                               f"to d_model ({self.d_model}); got {src.size(-1)} and "
                               f"{tgt.size(-1)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
    @staticmethod
    def generate_square_subsequent_mask(sz, device="cpu"):
        """[sz, sz] float: -inf above the diagonal, 0 elsewhere (position i sees j <= i)."""
        if isinstance(sz, bool) or not isinstance(sz, numbers.Integral):
            raise TypeError(f"[generate_square_subsequent_mask] sz must be an int; got {sz!r}")
        if sz < 0:
            raise ValueError(f"[generate_square_subsequent_mask] sz must be >= 0; got {sz}")
        idx = wick.arange(sz, device=device)
        above = idx.unsqueeze(0) > idx.unsqueeze(1)
        return wick.zeros((sz, sz), device=device).masked_fill(above, float("-inf"))
