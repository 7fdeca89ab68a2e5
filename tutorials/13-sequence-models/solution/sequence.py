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
    # BEGIN SOLUTION: gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh; split in 4 along dim 1
    gates = x @ w_ih.t() + b_ih + h @ w_hh.t() + b_hh
    i, f, g, o = gates.chunk(4, 1)
    c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c_next.tanh(), c_next
    # END SOLUTION


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU step, PyTorch's layout (gate blocks reset r, update z, new n):
    r = s(W_ir x + b_ir + W_hr h + b_hr), z likewise, n = tanh(W_in x + b_in + r*(W_hn h + b_hn)),
    h' = (1 - z)*n + z*h. Note r multiplies the hidden projection *with* its bias."""
    # BEGIN SOLUTION: project x and h separately; r and z from their sums, n uses r * (hidden part)
    xr, xz, xn = (x @ w_ih.t() + b_ih).chunk(3, 1)
    hr, hz, hn = (h @ w_hh.t() + b_hh).chunk(3, 1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return (1 - z) * n + z * h
    # END SOLUTION


def lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """A one-layer LSTM over time: x [T, B, I] (sequence first). Project the input of every step
    with ONE matmul before the loop (it does not depend on h), then step through time with only
    the hidden projection left inside the loop. Returns (outputs [T, B, H], (h_T, c_T))."""
    # BEGIN SOLUTION: xs = x @ w_ih.T + b_ih for all T at once; loop: gates = xs[t] + h @ w_hh.T + b_hh
    projected = x @ w_ih.t() + b_ih
    outputs = []
    for t in range(x.shape[0]):
        i, f, g, o = (projected[t] + h @ w_hh.t() + b_hh).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        outputs.append(h)
    return wick.stack(outputs), (h, c)
    # END SOLUTION


def attention(q, k, v, causal=False):
    """softmax(q k^T / sqrt(d) [+ causal mask]) v for q [..., L, d], k and v [..., S, d]. With
    causal, query i sees keys j <= i only (a -inf score above the diagonal)."""
    # BEGIN SOLUTION: scores = q @ k^T / sqrt(d); mask with -inf where j > i; softmax over keys
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        L, S = scores.shape[-2], scores.shape[-1]
        above = wick.ones(L, S, dtype=wick.bool).triu(1)
        scores = scores.masked_fill(above, float("-inf"))
    return scores.softmax(-1) @ v
    # END SOLUTION


def blocked_attention(q, k, v, block=16, causal=False):
    """The same result as attention(), computed over blocks of `block` keys with an online
    softmax, so no [L, S] matrix is ever held: keep per query a running max m, a running sum
    l of exp(score - m) and an unnormalised output acc; for each key block, rescale the old
    l and acc by exp(m_old - m_new) and add the block's share. Divide acc by l at the end.
    With causal, skip the key blocks that lie wholly above the diagonal."""
    # BEGIN SOLUTION: for each key block: s = q k_b^T / sqrt(d) (+mask); m_new = max(m, s.amax); rescale; accumulate
    L, S, d = q.shape[-2], k.shape[-2], q.shape[-1]
    m = wick.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype)
    total = wick.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = wick.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    rows = wick.arange(L).reshape(L, 1)
    for start in range(0, S, block):
        if causal and start > L - 1:
            break  # every key of this block lies after the last query
        kb, vb = k[..., start:start + block, :], v[..., start:start + block, :]
        s = q @ kb.transpose(-2, -1) / math.sqrt(d)
        if causal:
            cols = wick.arange(start, start + kb.shape[-2]).reshape(1, -1)
            s = s.masked_fill(cols > rows, float("-inf"))
        m_new = wick.maximum(m, s.amax(-1, keepdim=True))
        scale = (m - m_new).exp()
        p = (s - m_new).exp()
        total = total * scale + p.sum(-1, keepdim=True)
        acc = acc * scale + p @ vb
        m = m_new
    return acc / total
    # END SOLUTION


def multihead_attention(x, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias,
                        num_heads, causal=False):
    """Self-attention with nn.MultiheadAttention's parameters (batch_first): x [B, L, E];
    in_proj_weight [3E, E] stacks the q, k, v projections. Split E into num_heads heads of E/h,
    attend per head (your attention()), merge the heads and apply the output projection."""
    # BEGIN SOLUTION: qkv = x @ W_in^T + b_in; chunk 3; reshape [B, L, h, E/h] -> [B, h, L, E/h]
    B, L, E = x.shape
    head = E // num_heads
    q, k, v = (x @ in_proj_weight.t() + in_proj_bias).chunk(3, -1)
    q, k, v = (t.reshape(B, L, num_heads, head).transpose(1, 2) for t in (q, k, v))
    out = attention(q, k, v, causal).transpose(1, 2).reshape(B, L, E)
    return out @ out_proj_weight.t() + out_proj_bias
    # END SOLUTION


def decoder_layer(x, memory, layer, num_heads):
    """One step of nn.TransformerDecoderLayer (batch_first, post-norm, ReLU, no dropout), on
    `layer`'s own parameters: causal self-attention over the target x [B, T, E] (your
    multihead_attention); then cross-attention, whose queries come from x but whose keys and
    values come from the encoder's output memory [B, S, E], with no mask; then the feed-forward
    block. Each block is added to its input and layer-normalised (layer.norm1, norm2, norm3)."""
    # BEGIN SOLUTION: cross-attention: q = x W_q^T, (k, v) = memory (W_k, W_v)^T from multihead_attn.in_proj_*; attention per head
    sa, ca = layer.self_attn, layer.multihead_attn
    x = layer.norm1(x + multihead_attention(x, sa.in_proj_weight, sa.in_proj_bias,
                                            sa.out_proj.weight, sa.out_proj.bias, num_heads,
                                            causal=True))
    B, T, E = x.shape
    head = E // num_heads
    w_q, w_kv = ca.in_proj_weight[:E], ca.in_proj_weight[E:]
    b_q, b_kv = ca.in_proj_bias[:E], ca.in_proj_bias[E:]
    q = (x @ w_q.t() + b_q).reshape(B, T, num_heads, head).transpose(1, 2)
    k, v = (memory @ w_kv.t() + b_kv).chunk(2, -1)
    k, v = (t.reshape(B, -1, num_heads, head).transpose(1, 2) for t in (k, v))
    cross = attention(q, k, v).transpose(1, 2).reshape(B, T, E)
    x = layer.norm2(x + cross @ ca.out_proj.weight.t() + ca.out_proj.bias)
    return layer.norm3(x + layer.linear2(layer.linear1(x).relu()))
    # END SOLUTION
