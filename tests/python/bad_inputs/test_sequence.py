"""Bad inputs to the sequence layers: RNN / LSTM / GRU and their cells, packed sequences
(pack_padded_sequence, pad_sequence, pad_packed_sequence), MultiheadAttention, the Transformer
layers and scaled_dot_product_attention.

How the types were checked: each row was run against torch.nn 1.13 (Debian's torch,
/work/main/.venv); wick raises PyTorch's type, AssertionError included where PyTorch asserts (the
MultiheadAttention shape checks), so that code catching PyTorch's errors catches wick's. Where
PyTorch fails by accident (IndexError for num_layers=0, ZeroDivisionError for num_heads=0,
AttributeError for a tuple hx or an unpacked input, a reshape's RuntimeError for a batch
mismatch) or accepts the mistake (dropout=2.0 in MultiheadAttention, lengths past the sequence
in pack_padded_sequence), the row has wick's documented rule (core/error.h): ValueError for a bad
value or shape, TypeError for a wrong type."""

import wick as W
import wick.nn as nn
import wick.nn.functional as F
from wick.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence, \
    pad_sequence

from bad_inputs.corpus import Bad, check, parametrize

SEQ = W.ones(3, 2, 4)      # [steps, batch, features]
Q = W.ones(3, 2, 8)        # [target length, batch, embed_dim]
PADDED = W.ones(4, 3, 2)   # 4 steps, 3 sequences


def _rnn():
    return nn.RNN(4, 5)


def _lstm():
    return nn.LSTM(4, 5, num_layers=2)


def _gru():
    return nn.GRU(4, 5, batch_first=True)


def _mha():
    return nn.MultiheadAttention(8, 2)


def _encoder_layer():
    return nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)


def _decoder_layer():
    return nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)


def _transformer():
    return nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                          dim_feedforward=16)


def _packed(lengths=(4, 3, 2)):
    return pack_padded_sequence(PADDED, list(lengths))


RECURRENT = [
    Bad("rnn-hidden-0", lambda: nn.RNN(4, 0), ValueError, "RNN", ["hidden_size", "0"]),
    Bad("rnn-input-negative", lambda: nn.RNN(-1, 4), ValueError, "RNN", ["input_size", "-1"]),
    Bad("rnn-layers-0", lambda: nn.RNN(4, 4, num_layers=0), ValueError, "RNN",
        ["num_layers", "0"]),
    Bad("rnn-nonlinearity", lambda: nn.RNN(4, 4, nonlinearity="gelu"), ValueError,
        "nonlinearity", ["'gelu'"]),
    Bad("rnn-dropout-2", lambda: nn.RNN(4, 4, dropout=2.0), ValueError, "dropout", ["2.0"]),
    Bad("rnn-dropout-negative", lambda: nn.RNN(4, 4, dropout=-0.1), ValueError, "dropout",
        ["-0.1"]),
    Bad("lstm-proj-size-hidden", lambda: nn.LSTM(4, 4, proj_size=4), ValueError, "LSTM",
        ["proj_size=4"]),
    Bad("lstm-proj-size-negative", lambda: nn.LSTM(4, 4, proj_size=-1), ValueError, "proj_size",
        ["positive integer or zero"]),
    Bad("gru-proj-size", lambda: nn.GRU(4, 4, proj_size=2), ValueError, "proj_size",
        ["only supported for LSTM"]),
    Bad("lstm-hidden-float", lambda: nn.LSTM(4, 4.5), TypeError, "LSTM", ["hidden_size", "4.5"]),
    Bad("lstm-layers-str", lambda: nn.LSTM(4, 4, num_layers="2"), TypeError, "LSTM",
        ["num_layers", "'2'"]),
    Bad("rnn-input-4d", lambda: _rnn()(W.ones(2, 3, 4, 1)), RuntimeError, "RNN",
        ["3 dimensions", "got 5"]),
    Bad("rnn-input-1d", lambda: _rnn()(W.ones(4)), RuntimeError, "RNN", ["got 2"]),
    Bad("rnn-input-features", lambda: _rnn()(W.ones(3, 2, 6)), RuntimeError, "RNN",
        ["Expected 4, got 6"]),
    Bad("rnn-h0-batch", lambda: _rnn()(SEQ, W.zeros(1, 3, 5)), RuntimeError, "RNN",
        ["(1, 2, 5)", "[1, 3, 5]"]),
    Bad("rnn-h0-layers", lambda: _rnn()(SEQ, W.zeros(2, 2, 5)), RuntimeError, "RNN",
        ["[2, 2, 5]"]),
    # silent: "'tuple' object has no attribute 'dim'" (PyTorch's AttributeError too).
    Bad("rnn-h0-tuple", lambda: _rnn()(SEQ, (W.zeros(1, 2, 5), W.zeros(1, 2, 5))), TypeError,
        "RNN", ["hx", "tuple"]),
    Bad("rnn-empty-sequence", lambda: _rnn()(W.ones(0, 2, 4)), ValueError, "RNN_TANH",
        ["0 step(s)"]),
    Bad("lstm-h0-not-a-pair", lambda: _lstm()(SEQ, W.zeros(2, 2, 5)), TypeError, "LSTM",
        ["(h_0, c_0)", "Tensor"]),
    Bad("lstm-h0-three-states", lambda: _lstm()(SEQ, (W.zeros(2, 2, 5),) * 3), TypeError, "LSTM",
        ["tuple"]),
    Bad("lstm-c0-shape", lambda: _lstm()(SEQ, (W.zeros(2, 2, 5), W.zeros(2, 2, 6))),
        RuntimeError, "LSTM", ["hidden[1]", "[2, 2, 6]"]),
    Bad("lstm-int-input", lambda: _lstm()(W.ones(3, 2, 4, dtype=W.int64)), TypeError, "LSTM",
        ["int64"]),
    Bad("lstm-float64-input", lambda: _lstm()(W.ones(3, 2, 4, dtype=W.float64)), RuntimeError,
        "LSTM", ["float64", "float32"]),
    Bad("gru-batch-first-features", lambda: _gru()(W.ones(2, 3, 7)), RuntimeError, "GRU",
        ["Expected 4, got 7"]),
    Bad("gru-h0-batch", lambda: _gru()(W.ones(2, 3, 4), W.zeros(1, 3, 5)), RuntimeError, "GRU",
        ["[1, 3, 5]"]),
    Bad("gru-unbatched-h0-3d", lambda: _gru()(W.ones(3, 4), W.zeros(1, 2, 5)), RuntimeError,
        "GRU", ["2-D", "3-D"]),
    Bad("rnn-cell-input-width", lambda: nn.RNNCell(4, 5)(W.ones(2, 6)), RuntimeError,
        "rnn_tanh_cell", ["got 6 expected 4"]),
    Bad("lstm-cell-hidden-width", lambda: nn.LSTMCell(4, 5)(W.ones(2, 4), (W.zeros(2, 6),
                                                                          W.zeros(2, 5))),
        RuntimeError, "lstm_cell", ["got 6, expected 5"]),
    Bad("gru-cell-hidden-batch", lambda: nn.GRUCell(4, 5)(W.ones(2, 4), W.zeros(3, 5)),
        RuntimeError, "gru_cell", ["2", "3"]),
    Bad("lstm-cell-3d-input", lambda: nn.LSTMCell(4, 5)(W.ones(1, 2, 4)), ValueError,
        "LSTMCell", ["3-D"]),
]

PACKING = [
    Bad("pack-lengths-unsorted", lambda: _packed((2, 4, 3)), RuntimeError, "pack_padded_sequence",
        ["decreasing order"]),
    Bad("pack-length-past-steps", lambda: _packed((5, 3, 2)), RuntimeError,
        "pack_padded_sequence", ["5", "4 steps"]),
    Bad("pack-batch-first-length-past-steps",
        lambda: pack_padded_sequence(W.ones(3, 4, 2), [5, 3, 2], batch_first=True), RuntimeError,
        "pack_padded_sequence", ["5"]),
    Bad("pack-length-0", lambda: _packed((4, 2, 0)), RuntimeError, "pack_padded_sequence",
        ["greater than 0"]),
    Bad("pack-length-negative",
        lambda: pack_padded_sequence(PADDED, [4, 2, -1], enforce_sorted=False), RuntimeError,
        "pack_padded_sequence", ["greater than 0"]),
    Bad("pack-lengths-count", lambda: _packed((4, 2)), RuntimeError, "pack_padded_sequence",
        ["got 2 (batch_size=3)"]),
    Bad("pack-lengths-2d", lambda: pack_padded_sequence(PADDED, W.tensor([[4, 2, 1]])),
        RuntimeError, "pack_padded_sequence", ["2-D"]),
    # silent: int('a') - "invalid literal for int() with base 10", naming nothing.
    Bad("pack-lengths-str", lambda: pack_padded_sequence(PADDED, "abc"), TypeError,
        "pack_padded_sequence", ["'abc'"]),
    Bad("pack-input-1d", lambda: pack_padded_sequence(W.ones(4), [4]), RuntimeError,
        "pack_padded_sequence", ["1-D"]),
    Bad("pad-sequence-empty", lambda: pad_sequence([]), RuntimeError, "pad_sequence",
        ["empty list"]),
    Bad("pad-sequence-trailing-shape", lambda: pad_sequence([W.ones(3, 2), W.ones(2, 3)]),
        RuntimeError, "pad_sequence", ["(2,)", "(2, 3)"]),
    Bad("pad-sequence-lists", lambda: pad_sequence([[1, 2], [3]]), TypeError, "pad_sequence",
        ["list"]),
    Bad("pack-sequence-empty", lambda: pack_sequence([]), RuntimeError, "pad_sequence",
        ["empty list"]),
    Bad("pack-sequence-unsorted", lambda: pack_sequence([W.ones(2), W.ones(3)]), RuntimeError,
        "pack_padded_sequence", ["enforce_sorted"]),
    Bad("pad-packed-total-length-short", lambda: pad_packed_sequence(_packed(), total_length=2),
        ValueError, "pad_packed_sequence", ["total_length=2", "being 4"]),
    Bad("pad-packed-not-packed", lambda: pad_packed_sequence(PADDED), TypeError,
        "pad_packed_sequence", ["Tensor"]),
    Bad("lstm-packed-features", lambda: _lstm()(pack_padded_sequence(W.ones(4, 3, 6), [4, 3, 2])),
        RuntimeError, "LSTM", ["Expected 4, got 6"]),
]

ATTENTION = [
    Bad("mha-heads-do-not-divide", lambda: nn.MultiheadAttention(10, 3), AssertionError,
        "embed_dim", ["divisible by num_heads"]),
    Bad("mha-heads-0", lambda: nn.MultiheadAttention(8, 0), ValueError, "MultiheadAttention",
        ["num_heads", "0"]),
    Bad("mha-embed-0", lambda: nn.MultiheadAttention(0, 2), ValueError, "MultiheadAttention",
        ["embed_dim", "0"]),
    Bad("mha-embed-float", lambda: nn.MultiheadAttention(8.0, 2), TypeError,
        "MultiheadAttention", ["8.0"]),
    Bad("mha-dropout-2", lambda: nn.MultiheadAttention(8, 2, dropout=2.0), ValueError,
        "MultiheadAttention", ["2.0"]),
    Bad("mha-query-width", lambda: _mha()(W.ones(3, 2, 7), Q, Q), AssertionError,
        "embedding dimension", ["8", "7"]),
    Bad("mha-key-value-lengths", lambda: _mha()(Q, W.ones(4, 2, 8), W.ones(5, 2, 8)),
        AssertionError, "key shape", ["(4, 2, 8)", "(5, 2, 8)"]),
    Bad("mha-key-batch", lambda: _mha()(Q, W.ones(3, 3, 8), W.ones(3, 3, 8)), ValueError,
        "multi_head_attention_forward", ["batch size 3", "2"]),
    Bad("mha-query-4d", lambda: _mha()(W.ones(1, 3, 2, 8), W.ones(1, 3, 2, 8),
                                       W.ones(1, 3, 2, 8)),
        AssertionError, "query", ["4-D"]),
    Bad("mha-attn-mask-2d", lambda: _mha()(Q, Q, Q, attn_mask=W.zeros(4, 4)), RuntimeError,
        "attn_mask", ["(4, 4)", "(3, 3)"]),
    Bad("mha-attn-mask-3d", lambda: _mha()(Q, Q, Q, attn_mask=W.zeros(3, 3, 3)), RuntimeError,
        "attn_mask", ["(3, 3, 3)", "(4, 3, 3)"]),
    Bad("mha-attn-mask-1d", lambda: _mha()(Q, Q, Q, attn_mask=W.zeros(3)), AssertionError,
        "attn_mask", ["1-D"]),
    Bad("mha-attn-mask-int", lambda: _mha()(Q, Q, Q, attn_mask=W.zeros(3, 3, dtype=W.int64)),
        AssertionError, "attn_mask", ["int64"]),
    Bad("mha-key-padding-mask-shape",
        lambda: _mha()(Q, Q, Q, key_padding_mask=W.zeros(2, 4, dtype=W.bool)), AssertionError,
        "key_padding_mask", ["(2, 3)", "(2, 4)"]),
    Bad("mha-key-padding-mask-1d",
        lambda: _mha()(Q, Q, Q, key_padding_mask=W.zeros(3, dtype=W.bool)), AssertionError,
        "key_padding_mask", ["1-D"]),
    Bad("mha-unbatched-query-batched-key", lambda: _mha()(W.ones(3, 8), Q, Q), AssertionError,
        "unbatched", ["3-D"]),
    Bad("encoder-heads-do-not-divide", lambda: nn.TransformerEncoderLayer(10, 3), AssertionError,
        "embed_dim", ["divisible"]),
    Bad("encoder-activation", lambda: nn.TransformerEncoderLayer(8, 2, activation="swish"),
        RuntimeError, "activation", ["swish"]),
    Bad("encoder-feedforward-0", lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=0),
        ValueError, "TransformerEncoderLayer", ["dim_feedforward", "0"]),
    Bad("encoder-input-width", lambda: _encoder_layer()(W.ones(3, 2, 6)), AssertionError,
        "embedding dimension", ["6"]),
    Bad("encoder-src-mask", lambda: _encoder_layer()(Q, src_mask=W.zeros(4, 4)), RuntimeError,
        "attn_mask", ["(4, 4)"]),
    Bad("encoder-padding-mask", lambda: _encoder_layer()(
        Q, src_key_padding_mask=W.zeros(3, 3, dtype=W.bool)), AssertionError,
        "key_padding_mask", ["(3, 3)"]),
    Bad("encoder-stack-negative", lambda: nn.TransformerEncoder(_encoder_layer(), -1),
        ValueError, "TransformerEncoder", ["-1"]),
    Bad("decoder-memory-width", lambda: _decoder_layer()(Q, W.ones(4, 2, 6)), ValueError,
        "multi_head_attention_forward", ["6", "embed_dim 8"]),
    Bad("decoder-memory-batch", lambda: _decoder_layer()(Q, W.ones(4, 3, 8)), ValueError,
        "multi_head_attention_forward", ["batch size 3"]),
    Bad("decoder-tgt-mask", lambda: _decoder_layer()(Q, Q, tgt_mask=W.zeros(2, 2)),
        RuntimeError, "attn_mask", ["(2, 2)", "(3, 3)"]),
    Bad("transformer-heads-do-not-divide", lambda: nn.Transformer(d_model=10, nhead=3),
        AssertionError, "embed_dim", ["divisible"]),
    Bad("transformer-batch-mismatch", lambda: _transformer()(W.ones(3, 2, 8), W.ones(4, 3, 8)),
        RuntimeError, "Transformer", ["2 and 3"]),
    Bad("transformer-width-mismatch", lambda: _transformer()(W.ones(3, 2, 8), W.ones(4, 2, 6)),
        RuntimeError, "Transformer", ["d_model (8)", "6"]),
    # silent: the message named arange, not the mask.
    Bad("square-mask-negative", lambda: nn.Transformer.generate_square_subsequent_mask(-1),
        ValueError, "generate_square_subsequent_mask", ["-1"]),
    Bad("square-mask-float", lambda: nn.Transformer.generate_square_subsequent_mask(2.5),
        TypeError, "generate_square_subsequent_mask", ["2.5"]),
    Bad("sdpa-embedding-mismatch", lambda: F.scaled_dot_product_attention(
        W.ones(2, 3, 4), W.ones(2, 5, 6), W.ones(2, 5, 4)), RuntimeError,
        "scaled_dot_product_attention", ["4", "6"]),
    Bad("sdpa-dropout", lambda: F.scaled_dot_product_attention(
        W.ones(2, 3, 4), W.ones(2, 5, 4), W.ones(2, 5, 4), dropout_p=1.5), ValueError,
        "scaled_dot_product_attention", ["1.5"]),
]

CASES = RECURRENT + PACKING + ATTENTION


@parametrize(CASES)
def test_bad_input(case):
    check(case)
