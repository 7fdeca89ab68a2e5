"""Lab 13's graded tests: the hand-written LSTM and GRU cells and the LSTM over time against
nn.LSTMCell, nn.GRUCell and nn.LSTM on the same weights (and PyTorch's); attention against
scaled_dot_product_attention, causal and not; the blocked online-softmax attention against the
plain one, with the memory it never allocates; multi-head attention against
nn.MultiheadAttention; a decoder layer (self- and cross-attention) against
nn.TransformerDecoderLayer."""

import time

import numpy as np
import pytest
import torch
import wick
from labkit import figure, impl

L = impl(__file__, "sequence")


def weights(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) * 0.5 for s in shapes]


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def copy_into(module, values):
    with wick.no_grad():
        for p, v in zip(module.parameters(), values):
            p.copy_(wick.tensor(v, dtype=p.dtype))


def test_lstm_cell_matches_the_library_and_pytorch():
    B, I, H = 3, 5, 4
    w = weights(1, (4 * H, I), (4 * H, H), (4 * H,), (4 * H,))
    x, h, c = weights(2, (B, I), (B, H), (B, H))
    cell = wick.nn.LSTMCell(I, H).double()
    copy_into(cell, w)
    mine = L.lstm_cell(*(wick.tensor(a) for a in (x, h, c)), *(wick.tensor(a) for a in w))
    ref = cell(wick.tensor(x), (wick.tensor(h), wick.tensor(c)))
    tref = torch.nn.LSTMCell(I, H).double()
    with torch.no_grad():
        for p, v in zip(tref.parameters(), w):
            p.copy_(torch.tensor(v))
    t_h, t_c = tref(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
    for got, lib, th in zip(mine, ref, (t_h, t_c)):
        close(got, lib)
        np.testing.assert_allclose(got.numpy(), th.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_gru_cell_matches_the_library():
    B, I, H = 3, 5, 4
    w = weights(3, (3 * H, I), (3 * H, H), (3 * H,), (3 * H,))
    x, h = weights(4, (B, I), (B, H))
    cell = wick.nn.GRUCell(I, H).double()
    copy_into(cell, w)
    close(L.gru_cell(wick.tensor(x), wick.tensor(h), *(wick.tensor(a) for a in w)),
          cell(wick.tensor(x), wick.tensor(h)))


def test_lstm_over_time_matches_nn_lstm_and_its_gradients():
    T, B, I, H = 12, 2, 3, 4
    w = weights(5, (4 * H, I), (4 * H, H), (4 * H,), (4 * H,))
    x, h, c = weights(6, (T, B, I), (1, B, H), (1, B, H))
    lstm = wick.nn.LSTM(I, H).double()
    copy_into(lstm, w)
    params = [wick.tensor(a, requires_grad=True) for a in w]
    out, (hT, cT) = L.lstm(wick.tensor(x), wick.tensor(h[0]), wick.tensor(c[0]), *params)
    ref, (rh, rc) = lstm(wick.tensor(x), (wick.tensor(h), wick.tensor(c)))
    close(out, ref)
    close(hT, rh[0])
    close(cT, rc[0])
    (out.sum() + cT.sum()).backward()
    (ref.sum() + rc.sum()).backward()
    for mine, lib in zip(params, lstm.parameters()):
        close(mine.grad, lib.grad, 1e-9)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_scaled_dot_product_attention(causal):
    q, k, v = weights(7, (2, 3, 10, 8), (2, 3, 10, 8), (2, 3, 10, 8))
    got = L.attention(*(wick.tensor(a) for a in (q, k, v)), causal=causal)
    ref = wick.nn.functional.scaled_dot_product_attention(
        *(wick.tensor(a) for a in (q, k, v)), is_causal=causal)
    close(got, ref)


@pytest.mark.parametrize("causal", [False, True])
def test_blocked_attention_equals_the_plain_one(causal):
    q, k, v = weights(8, (2, 37, 16), (2, 37, 16), (2, 37, 16))
    plain = L.attention(*(wick.tensor(a) for a in (q, k, v)), causal=causal)
    for block in (1, 5, 16, 64):
        close(L.blocked_attention(*(wick.tensor(a) for a in (q, k, v)), block=block,
                                  causal=causal), plain)
    # Scores of 1000 would overflow exp() without the running max.
    big = [a * 300 for a in (q, k)]
    close(L.blocked_attention(wick.tensor(big[0]), wick.tensor(big[1]), wick.tensor(v), block=8),
          L.attention(wick.tensor(big[0]), wick.tensor(big[1]), wick.tensor(v)), 1e-8)


def test_blocked_attention_never_holds_the_score_matrix():
    n, d, block = 2048, 32, 128
    q, k, v = (wick.tensor(a, dtype=wick.float32) for a in weights(9, (n, d), (n, d), (n, d)))
    start = time.perf_counter()
    plain = L.attention(q, k, v, causal=True)
    t_plain = time.perf_counter() - start
    start = time.perf_counter()
    blocked = L.blocked_attention(q, k, v, block=block, causal=True)
    t_blocked = time.perf_counter() - start
    np.testing.assert_allclose(blocked.numpy(), plain.numpy(), rtol=1e-4, atol=1e-5)
    figure("score matrix of plain attention, L=2048 (MiB)", round(n * n * 4 / 2**20, 1))
    figure("scores held per block, block=128 (MiB)", round(n * block * 4 / 2**20, 2))
    figure("plain / blocked attention time, L=2048 causal (ms)",
           f"{1e3 * t_plain:.0f} / {1e3 * t_blocked:.0f}")


def test_multihead_attention_matches_nn_multihead_attention():
    B, Lq, E, heads = 2, 7, 12, 3
    mha = wick.nn.MultiheadAttention(E, heads, batch_first=True).double()
    x = wick.tensor(weights(10, (B, Lq, E))[0])
    for causal in (False, True):
        mask = wick.ones(Lq, Lq, dtype=wick.bool).triu(1) if causal else None
        ref, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
        got = L.multihead_attention(x, mha.in_proj_weight, mha.in_proj_bias,
                                    mha.out_proj.weight, mha.out_proj.bias, heads, causal)
        close(got, ref)


def test_decoder_layer_matches_nn_transformer_decoder_layer():
    """Self-attention (causal) over the target, cross-attention to the encoder's output, the
    feed-forward block: against wick's and PyTorch's TransformerDecoderLayer on one set of
    weights."""
    B, T, S, E, heads = 2, 5, 7, 12, 3
    layer = wick.nn.TransformerDecoderLayer(E, heads, 24, dropout=0.0, batch_first=True).double()
    reference = torch.nn.TransformerDecoderLayer(E, heads, 24, dropout=0.0,
                                                 batch_first=True).double()
    reference.load_state_dict({k: torch.tensor(v.detach().numpy())
                               for k, v in layer.state_dict().items()})
    x, memory = weights(11, (B, T, E), (B, S, E))
    causal = wick.nn.Transformer.generate_square_subsequent_mask(T).double()
    got = L.decoder_layer(wick.tensor(x), wick.tensor(memory), layer, heads)
    close(got, layer(wick.tensor(x), wick.tensor(memory), tgt_mask=causal))
    expected = reference(torch.tensor(x), torch.tensor(memory),
                         tgt_mask=torch.tensor(causal.numpy()))
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10,
                               atol=1e-10)
