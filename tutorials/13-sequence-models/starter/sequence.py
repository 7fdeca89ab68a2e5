"""Lab 13: sequence models by hand - an LSTM cell, a GRU cell, an LSTM over time, attention, the
same attention computed block by block with an online softmax, and multi-head attention.

Each function is written with plain wick tensor ops (matmul, sigmoid, tanh, softmax, exp, ...),
and the tests check it against the library's fused version (nn.LSTMCell, nn.GRUCell, nn.LSTM,
nn.functional.scaled_dot_product_attention, nn.MultiheadAttention) on the same weights, and
against PyTorch. The library runs the same math with fewer passes over memory: one GEMM for the
whole sequence's input projection, one fused kernel for the gates of a step, and attention in
tiles that never hold the L x L score matrix."""

import math

import wick


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One LSTM step, PyTorch's layout: x [B, I], h and c [B, H], w_ih [4H, I], w_hh [4H, H],
    biases [4H], the four gate blocks stacked in the order input, forget, cell (g), output.
    Returns (h', c') with c' = f*c + i*g and h' = o*tanh(c')."""
    # TODO(13): lstm_cell: gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh; split in 4 along dim 1
    raise NotImplementedError("lstm_cell: gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh; split in 4 along dim 1")


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU step, PyTorch's layout (gate blocks reset r, update z, new n):
    r = s(W_ir x + b_ir + W_hr h + b_hr), z likewise, n = tanh(W_in x + b_in + r*(W_hn h + b_hn)),
    h' = (1 - z)*n + z*h. Note r multiplies the hidden projection *with* its bias."""
    # TODO(13): gru_cell: project x and h separately; r and z from their sums, n uses r * (hidden part)
    raise NotImplementedError("gru_cell: project x and h separately; r and z from their sums, n uses r * (hidden part)")


def lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """A one-layer LSTM over time: x [T, B, I] (sequence first). Project the input of every step
    with ONE matmul before the loop (it does not depend on h), then step through time with only
    the hidden projection left inside the loop. Returns (outputs [T, B, H], (h_T, c_T))."""
    # TODO(13): lstm: xs = x @ w_ih.T + b_ih for all T at once; loop: gates = xs[t] + h @ w_hh.T + b_hh
    raise NotImplementedError("lstm: xs = x @ w_ih.T + b_ih for all T at once; loop: gates = xs[t] + h @ w_hh.T + b_hh")


def attention(q, k, v, causal=False):
    """softmax(q k^T / sqrt(d) [+ causal mask]) v for q [..., L, d], k and v [..., S, d]. With
    causal, query i sees keys j <= i only (a -inf score above the diagonal)."""
    # TODO(13): attention: scores = q @ k^T / sqrt(d); mask with -inf where j > i; softmax over keys
    raise NotImplementedError("attention: scores = q @ k^T / sqrt(d); mask with -inf where j > i; softmax over keys")


def blocked_attention(q, k, v, block=16, causal=False):
    """The same result as attention(), computed over blocks of `block` keys with an online
    softmax, so no [L, S] matrix is ever held: keep per query a running max m, a running sum
    l of exp(score - m) and an unnormalised output acc; for each key block, rescale the old
    l and acc by exp(m_old - m_new) and add the block's share. Divide acc by l at the end.
    With causal, skip the key blocks that lie wholly above the diagonal."""
    # TODO(13): blocked_attention: for each key block: s = q k_b^T / sqrt(d) (+mask); m_new = max(m, s.amax); rescale; accumulate
    raise NotImplementedError("blocked_attention: for each key block: s = q k_b^T / sqrt(d) (+mask); m_new = max(m, s.amax); rescale; accumulate")


def multihead_attention(x, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias,
                        num_heads, causal=False):
    """Self-attention with nn.MultiheadAttention's parameters (batch_first): x [B, L, E];
    in_proj_weight [3E, E] stacks the q, k, v projections. Split E into num_heads heads of E/h,
    attend per head (your attention()), merge the heads and apply the output projection."""
    # TODO(13): multihead_attention: qkv = x @ W_in^T + b_in; chunk 3; reshape [B, L, h, E/h] -> [B, h, L, E/h]
    raise NotImplementedError("multihead_attention: qkv = x @ W_in^T + b_in; chunk 3; reshape [B, L, h, E/h] -> [B, h, L, E/h]")


def decoder_layer(x, memory, layer, num_heads):
    """One step of nn.TransformerDecoderLayer (batch_first, post-norm, ReLU, no dropout), on
    `layer`'s own parameters: causal self-attention over the target x [B, T, E] (your
    multihead_attention); then cross-attention, whose queries come from x but whose keys and
    values come from the encoder's output memory [B, S, E], with no mask; then the feed-forward
    block. Each block is added to its input and layer-normalised (layer.norm1, norm2, norm3)."""
    # TODO(13): decoder_layer: cross-attention: q = x W_q^T, (k, v) = memory (W_k, W_v)^T from multihead_attn.in_proj_*; attention per head
    raise NotImplementedError("decoder_layer: cross-attention: q = x W_q^T, (k, v) = memory (W_k, W_v)^T from multihead_attn.in_proj_*; attention per head")
