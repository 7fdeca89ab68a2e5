"""nn.TransformerDecoderLayer, nn.TransformerDecoder and the encoder-decoder nn.Transformer against
PyTorch 1.13: the same state_dict keys in the same order, the same outputs and gradients (float64)
once torch's weights are loaded, masks and padding included; plus the is_causal hint and the
checks nn.Transformer makes on its inputs."""

import numpy as np
import pytest

import wick
from reference import needs_torch, torch
from test_attention import load_from_torch, run_both

D, HEADS, FF = 8, 2, 12


def decoder_pair(num_layers=None, final_norm=False, **kwargs):
    kwargs = dict(d_model=D, nhead=HEADS, dim_feedforward=FF, dropout=0.0, **kwargs)
    t = torch.nn.TransformerDecoderLayer(**kwargs)
    w = wick.nn.TransformerDecoderLayer(**kwargs)
    if num_layers is not None:
        t = torch.nn.TransformerDecoder(t, num_layers,
                                        norm=torch.nn.LayerNorm(D) if final_norm else None)
        w = wick.nn.TransformerDecoder(w, num_layers,
                                       norm=wick.nn.LayerNorm(D) if final_norm else None)
    t, w = t.double(), w.double()
    assert list(w.state_dict()) == list(t.state_dict())
    load_from_torch(w, t)
    return w, t


def inputs(batch_first, T=4, S=5, N=3, seed=0):
    rng = np.random.default_rng(seed)
    shape = (lambda L: (N, L, D)) if batch_first else (lambda L: (L, N, D))
    tgt, memory = rng.standard_normal(shape(T)), rng.standard_normal(shape(S))
    causal = np.triu(np.full((T, T), -np.inf), 1)
    tgt_pad = np.zeros((N, T), dtype=bool)
    tgt_pad[2, 3:] = True
    memory_pad = np.zeros((N, S), dtype=bool)
    memory_pad[1, 4:] = True
    return tgt, memory, causal, tgt_pad, memory_pad


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_decoder_layer_matches_torch(batch_first, norm_first, activation):
    w, t = decoder_pair(batch_first=batch_first, norm_first=norm_first, activation=activation)
    run_both(w, t, list(inputs(batch_first)),
             lambda mod, m, tgt, mem, mask, tpad, mpad: (
                 mod(tgt, mem, tgt_mask=mask, tgt_key_padding_mask=tpad,
                     memory_key_padding_mask=mpad),))
    w.zero_grad(), t.zero_grad()
    run_both(w, t, list(inputs(batch_first)[:2]), lambda mod, m, tgt, mem: (mod(tgt, mem),))


@needs_torch
@pytest.mark.parametrize("final_norm", [False, True])
def test_decoder_stack_matches_torch(final_norm):
    w, t = decoder_pair(num_layers=3, final_norm=final_norm, batch_first=True)
    assert "layers.2.multihead_attn.in_proj_weight" in w.state_dict()
    memory_mask = np.zeros((4, 5))
    memory_mask[0, 3:] = -np.inf  # the first target position may not see the last two sources
    run_both(w, t, list(inputs(True)[:3]) + [memory_mask],
             lambda mod, m, tgt, mem, mask, mmask: (
                 mod(tgt, mem, tgt_mask=mask, memory_mask=mmask),))


def transformer_pair(**kwargs):
    kwargs = dict(d_model=D, nhead=HEADS, num_encoder_layers=2, num_decoder_layers=2,
                  dim_feedforward=FF, dropout=0.0, **kwargs)
    t = torch.nn.Transformer(**kwargs).double()
    w = wick.nn.Transformer(**kwargs).double()
    assert list(w.state_dict()) == list(t.state_dict())
    load_from_torch(w, t)
    return w, t


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(batch_first):
    w, t = transformer_pair(batch_first=batch_first)
    tgt, src, causal, tgt_pad, src_pad = inputs(batch_first, seed=4)
    run_both(w, t, [src, tgt, causal, src_pad, tgt_pad],
             lambda mod, m, s, tg, mask, spad, tpad: (
                 mod(s, tg, tgt_mask=mask, src_key_padding_mask=spad,
                     tgt_key_padding_mask=tpad, memory_key_padding_mask=spad),))


def test_transformer_initialises_matrices_xavier_uniform():
    """Every weight matrix is re-drawn from U(-a, a), a = sqrt(6 / (fan_in + fan_out)), as
    PyTorch's _reset_parameters does; biases and norms keep their layers' initialisation."""
    wick.manual_seed(0)
    model = wick.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                                dim_feedforward=32)
    for name, p in model.named_parameters():
        values = p.detach().numpy()
        if p.dim() > 1:
            bound = np.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            assert np.abs(values).max() <= bound, name
            assert np.abs(values).max() > 0.8 * bound, name  # spread over the range, not zero
        elif name.endswith("norm1.weight"):
            assert (values == 1).all(), name


def test_transformer_is_trainable_and_subclassable():
    """pytorch/examples' word_language_model subclasses nn.Transformer, replaces .decoder with a
    Linear and calls .encoder alone with a causal mask; one SGD step must lower the loss."""
    class Model(wick.nn.Transformer):
        def __init__(self):
            super().__init__(d_model=8, nhead=2, dim_feedforward=16, num_encoder_layers=2)
            self.embed = wick.nn.Embedding(11, 8)
            self.decoder = wick.nn.Linear(8, 11)

        def forward(self, src):
            mask = self.generate_square_subsequent_mask(len(src))
            return self.decoder(self.encoder(self.embed(src), mask=mask, is_causal=True))

    wick.manual_seed(1)
    model = Model()
    assert not any(k.startswith("decoder.layers") for k in model.state_dict())
    data = wick.randint(0, 11, (7, 3))
    opt = wick.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(2):
        loss = wick.nn.functional.cross_entropy(model(data[:-1]).reshape(-1, 11),
                                                data[1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[1] < losses[0]


@pytest.mark.parametrize("call,message", [
    (lambda m: m(wick.randn(5, 2, 8), wick.randn(4, 3, 8)), "batch number of src and tgt"),
    (lambda m: m(wick.randn(5, 2, 8), wick.randn(4, 2, 6)), "feature number"),
    (lambda m: m(wick.randn(5, 2, 8), wick.randn(4, 2, 8), tgt_is_causal=True), "tgt_mask"),
    (lambda m: m.encoder(wick.randn(5, 2, 8), is_causal=True), "mask"),
])
def test_transformer_bad_inputs(call, message):
    model = wick.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                dim_feedforward=8)
    with pytest.raises(RuntimeError, match=message):
        call(model)


def test_decoder_layer_bad_feedforward_size():
    with pytest.raises(ValueError, match=r"TransformerDecoderLayer.*dim_feedforward.*0"):
        wick.nn.TransformerDecoderLayer(8, 2, dim_feedforward=0)
