"""Attention: F.scaled_dot_product_attention (blocked kernel, forward and backward),
nn.MultiheadAttention, nn.TransformerEncoderLayer and nn.TransformerEncoder against PyTorch 1.13.
PyTorch 1.13 has no scaled_dot_product_attention, so the reference is its explicit formula with
torch ops; the modules are torch's own, with their state_dict loaded into wick's."""

import math

import numpy as np
import pytest

import wick
from reference import check, needs_torch, torch


def reference_sdpa(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v with torch 1.13 ops; bool masks are True where allowed."""
    L, S = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if is_causal:
        hidden = torch.ones(L, S, dtype=torch.bool).tril().logical_not()
        scores = scores.masked_fill(hidden, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    return torch.softmax(scores, -1) @ v


def sdpa(m, *args, **kwargs):
    if m is wick:
        return wick.nn.functional.scaled_dot_product_attention(*args, **kwargs)
    return reference_sdpa(*args, **kwargs)


# (batch dims, L, S, E, Ev): one tile and several (the kernel's tiles are 64 x 64), L != S both
# ways, and a head dim that differs between the keys and the values.
SHAPES = [((2, 3), 5, 7, 4, 6), ((3,), 1, 1, 8, 8), ((1, 2), 130, 70, 8, 5),
          ((2,), 70, 130, 3, 4), ((), 9, 9, 16, 16)]


def qkv_specs(batch, L, S, E, Ev):
    return [(*batch, L, E), (*batch, S, E), (*batch, S, Ev)]


@needs_torch
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_matches_the_explicit_formula(shape, is_causal):
    specs = qkv_specs(*shape)
    check(lambda m, q, k, v: sdpa(m, q, k, v, is_causal=is_causal), specs)
    check(lambda m, q, k, v: sdpa(m, q, k, v, is_causal=is_causal), specs, noncontig=True,
          seed=1)


@needs_torch
@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_float32(is_causal):
    specs = qkv_specs((2, 2), 80, 100, 16, 8)
    check(lambda m, q, k, v: sdpa(m, q, k, v, is_causal=is_causal), specs, dtype=np.float32,
          atol=2e-6, rtol=2e-5)


@needs_torch
@pytest.mark.parametrize("mask_shape", [(5, 7), (2, 1, 5, 7), (1, 7), (2, 3, 5, 7), (3, 1, 7)],
                         ids=str)
def test_sdpa_bool_and_float_masks(mask_shape):
    rng = np.random.default_rng(3)
    keep = rng.random(mask_shape) > 0.3
    keep[..., 0] = True  # every row keeps a key (a fully hidden row is NaN; tested below)
    specs = qkv_specs((2, 3), 5, 7, 4, 6)
    check(lambda m, q, k, v: sdpa(m, q, k, v, attn_mask=m.tensor(keep)), specs)
    additive = rng.standard_normal(mask_shape)
    check(lambda m, q, k, v, a: sdpa(m, q, k, v, attn_mask=a), specs + [additive],
          requires_grad=[True, True, True, False])


@needs_torch
def test_sdpa_float_mask_gradient_and_scale():
    # A float mask that requires grad gets its gradient (through the explicit formula).
    specs = qkv_specs((2,), 6, 4, 3, 3) + [(6, 4)]
    check(lambda m, q, k, v, a: sdpa(m, q, k, v, attn_mask=a, scale=0.3), specs)


@needs_torch
def test_sdpa_fully_hidden_row_is_nan_like_the_formula():
    q, k, v = (np.random.default_rng(0).standard_normal(s) for s in ((4, 3), (5, 3), (5, 2)))
    keep = np.ones((4, 5), dtype=bool)
    keep[2] = False
    w = sdpa(wick, wick.tensor(q), wick.tensor(k), wick.tensor(v), attn_mask=wick.tensor(keep))
    t = reference_sdpa(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                       attn_mask=torch.tensor(keep))
    np.testing.assert_allclose(w.numpy(), t.numpy())
    assert np.isnan(w.numpy()[2]).all() and not np.isnan(w.numpy()[[0, 1, 3]]).any()


def test_sdpa_gradcheck_float64():
    rng = np.random.default_rng(7)
    for causal, mask in ((False, None), (True, None), (False, rng.standard_normal((3, 4)))):
        q, k, v = (wick.tensor(rng.standard_normal(s), requires_grad=True)
                   for s in ((2, 3, 2), (2, 4, 2), (2, 4, 3)))
        m = None if mask is None else wick.tensor(mask)
        f = lambda q, k, v: wick.nn.functional.scaled_dot_product_attention(  # noqa: E731
            q, k, v, attn_mask=m, is_causal=causal)
        assert wick.autograd.gradcheck(f, (q, k, v))
        assert wick.autograd.gradgradcheck(f, (q, k, v))


def test_sdpa_records_its_own_node():
    q = wick.randn(2, 70, 8, requires_grad=True)
    out = wick.nn.functional.scaled_dot_product_attention(q, q, q)
    assert out.grad_fn.name() == "ScaledDotProductAttentionBackward"


def test_sdpa_dropout():
    rng = np.random.default_rng(2)
    q, k, v = (wick.tensor(rng.standard_normal(s)) for s in ((64, 4), (32, 4), (32, 4)))
    F = wick.nn.functional
    assert (F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0).all()
    plain = F.scaled_dot_product_attention(q, k, v).numpy()
    wick.manual_seed(0)
    mean = sum(F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
               for _ in range(400)) / 400
    np.testing.assert_allclose(mean, plain, atol=0.12)  # inverted dropout keeps the expectation
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)


def test_sdpa_bad_inputs_raise_runtime_error_naming_the_op():
    F = wick.nn.functional
    q, k, v = wick.randn(2, 5, 4), wick.randn(2, 7, 4), wick.randn(2, 7, 6)
    with pytest.raises(RuntimeError, match=r"scaled_dot_product_attention.*embedding size 4"):
        F.scaled_dot_product_attention(q, wick.randn(2, 7, 3), v)
    with pytest.raises(RuntimeError, match="positions"):
        F.scaled_dot_product_attention(q, k, wick.randn(2, 6, 6))
    with pytest.raises(RuntimeError, match="batch dims"):
        F.scaled_dot_product_attention(q, wick.randn(3, 7, 4), wick.randn(3, 7, 6))
    with pytest.raises(RuntimeError, match=r"attn_mask of shape \(4, 7\)"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=wick.ones(4, 7, dtype=wick.bool))
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=wick.ones(5, 7), is_causal=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(q, k.double(), v)


# ---- MultiheadAttention ----

def load_from_torch(w_module, t_module):
    w_module.load_state_dict({k: wick.tensor(v.detach().numpy())
                              for k, v in t_module.state_dict().items()})


def compare_grads(w_module, t_module, atol=1e-9):
    t_params = dict(t_module.named_parameters())
    for name, p in w_module.named_parameters():
        tp = t_params[name]
        assert (p.grad is None) == (tp.grad is None), name
        if tp.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=atol, rtol=1e-7,
                                       err_msg=name)


def mha_pair(**kwargs):
    torch.manual_seed(0)
    t = torch.nn.MultiheadAttention(**kwargs).double()
    w = wick.nn.MultiheadAttention(**kwargs).double()
    assert list(w.state_dict()) == list(t.state_dict())
    load_from_torch(w, t)
    return w, t


def run_both(w_mod, t_mod, arrays, call, weights_seed=9):
    """call(module, framework, *tensors) -> tuple of outputs; compares them, then the gradients of
    the parameters and of the inputs under a random weighting of the first output."""
    w_in = [wick.tensor(a, requires_grad=a.dtype == np.float64) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=a.dtype == np.float64) for a in arrays]
    w_out, t_out = call(w_mod, wick, *w_in), call(t_mod, torch, *t_in)
    for a, b in zip(w_out, t_out):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-10,
                                       rtol=1e-9)
    weights = np.random.default_rng(weights_seed).standard_normal(tuple(t_out[0].shape))
    (w_out[0] * wick.tensor(weights)).sum().backward()
    (t_out[0] * torch.tensor(weights)).sum().backward()
    compare_grads(w_mod, t_mod)
    for a, b in zip(w_in, t_in):
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-9)


MHA_CONFIGS = [dict(), dict(batch_first=True), dict(bias=False), dict(kdim=3, vdim=5),
               dict(add_bias_kv=True), dict(add_zero_attn=True),
               dict(add_bias_kv=True, add_zero_attn=True, batch_first=True)]


@needs_torch
@pytest.mark.parametrize("config", MHA_CONFIGS, ids=str)
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_matches_torch(config, need_weights):
    w, t = mha_pair(embed_dim=8, num_heads=2, **config)
    L, S, N = 4, 6, 3
    kdim, vdim = config.get("kdim", 8), config.get("vdim", 8)
    bf = config.get("batch_first", False)
    shape = (lambda T, E: (N, T, E)) if bf else (lambda T, E: (T, N, E))
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape(L, 8)), rng.standard_normal(shape(S, kdim)),
              rng.standard_normal(shape(S, vdim))]
    run_both(w, t, arrays, lambda mod, m, q, k, v: mod(q, k, v, need_weights=need_weights))


@needs_torch
@pytest.mark.parametrize("mask_kind", ["bool2d", "float2d", "bool3d", "float3d", "kpm",
                                       "kpm+bool2d", "kpm+float3d"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_masks(mask_kind, need_weights):
    w, t = mha_pair(embed_dim=6, num_heads=3, batch_first=True)
    N, L, S, H = 2, 5, 4, 3
    rng = np.random.default_rng(4)
    hide2 = rng.random((L, S)) > 0.6
    hide3 = rng.random((N * H, L, S)) > 0.6
    hide2[:, 0] = hide3[:, :, 0] = False
    kpm = np.array([[False, False, True, True], [False, True, False, False]])
    masks = {"bool2d": (hide2, None), "float2d": (rng.standard_normal((L, S)), None),
             "bool3d": (hide3, None), "float3d": (rng.standard_normal((N * H, L, S)), None),
             "kpm": (None, kpm), "kpm+bool2d": (hide2, kpm),
             "kpm+float3d": (rng.standard_normal((N * H, L, S)), kpm)}
    attn_mask, key_padding_mask = masks[mask_kind]
    arrays = [rng.standard_normal((N, L, 6)), rng.standard_normal((N, S, 6)),
              rng.standard_normal((N, S, 6))]

    def call(mod, m, q, k, v):
        am = None if attn_mask is None else m.tensor(attn_mask)
        kp = None if key_padding_mask is None else m.tensor(key_padding_mask)
        return mod(q, k, v, key_padding_mask=kp, attn_mask=am, need_weights=need_weights,
                   average_attn_weights=False)
    run_both(w, t, arrays, call)


@needs_torch
def test_multihead_attention_unbatched_and_averaged_weights():
    w, t = mha_pair(embed_dim=4, num_heads=2)
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal((5, 4)),
              rng.standard_normal((5, 4)), np.array([False, False, True, False, False])]
    run_both(w, t, arrays, lambda mod, m, q, k, v, kpm: mod(q, k, v, key_padding_mask=kpm))


def test_multihead_attention_initialisation_like_torch():
    wick.manual_seed(0)
    w = wick.nn.MultiheadAttention(64, 4)
    assert not w.in_proj_bias.detach().numpy().any()
    assert not w.out_proj.bias.detach().numpy().any()
    bound = math.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ of the packed [3E, E] weight
    x = w.in_proj_weight.detach().numpy()
    assert np.abs(x).max() <= bound and np.abs(x).max() > 0.9 * bound
    assert type(w.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


MHA_BAD_INPUTS = [  # (call on a MultiheadAttention(8, 2) and x [4, 2, 8], error, message)
    (lambda m, mha, x: mha(m.randn(4, 2, 6), x, x), AssertionError,
     "expecting embedding dimension of 8, but got 6"),
    (lambda m, mha, x: mha(x, x, m.randn(5, 2, 8)), AssertionError, "key shape"),
    (lambda m, mha, x: mha(x, m.randn(4, 8), x), AssertionError,
     "expected `key` and `value` to be 3-D"),
    (lambda m, mha, x: mha(x, x, x, attn_mask=m.zeros(3, 4)), RuntimeError,
     r"2D attn_mask is .*\(3, 4\).*, but should be \(4, 4\)"),
    (lambda m, mha, x: mha(x, x, x, attn_mask=m.zeros(2, 4, 4)), RuntimeError,
     r"3D attn_mask is .*\(2, 4, 4\).*, but should be \(4, 4, 4\)"),
    (lambda m, mha, x: mha(x, x, x, key_padding_mask=m.zeros(2, 3, dtype=m.bool)),
     AssertionError, r"key_padding_mask shape of \(2, 4\), but got .*\(2, 3\)"),
    (lambda m, mha, x: mha(x, x, x, attn_mask=m.zeros(4, 4, dtype=m.int64)), AssertionError,
     "Only float, byte, and bool types"),
]


@pytest.mark.parametrize("case", range(len(MHA_BAD_INPUTS)))
def test_multihead_attention_bad_inputs_raise_like_torch(case):
    call, error, message = MHA_BAD_INPUTS[case]
    modules = [wick] + ([torch] if torch is not None else [])
    for m in modules:  # the same exception type in both, and wick's message
        mha = m.nn.MultiheadAttention(8, 2)
        with pytest.raises(error, match=message if m is wick else None):
            call(m, mha, m.randn(4, 2, 8))


def test_multihead_attention_embed_dim_not_divisible():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        wick.nn.MultiheadAttention(10, 3)


# ---- TransformerEncoderLayer / TransformerEncoder ----

def encoder_pair(num_layers=None, final_norm=False, **kwargs):
    kwargs.setdefault("dropout", 0.0)
    torch.manual_seed(0)
    t_layer = torch.nn.TransformerEncoderLayer(**kwargs)
    w_layer = wick.nn.TransformerEncoderLayer(**kwargs)
    if num_layers is None:
        t, w = t_layer.double(), w_layer.double()
    else:
        d = kwargs["d_model"]
        t = torch.nn.TransformerEncoder(t_layer, num_layers,
                                        norm=torch.nn.LayerNorm(d) if final_norm else None,
                                        enable_nested_tensor=False).double()
        w = wick.nn.TransformerEncoder(w_layer, num_layers,
                                       norm=wick.nn.LayerNorm(d) if final_norm else None).double()
        # The copies are independent: torch's layers differ after loading, and so must wick's.
    assert list(w.state_dict()) == list(t.state_dict())
    load_from_torch(w, t)
    return w, t


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_layer_matches_torch(batch_first, norm_first, activation):
    w, t = encoder_pair(d_model=8, nhead=2, dim_feedforward=16, batch_first=batch_first,
                        norm_first=norm_first, activation=activation)
    rng = np.random.default_rng(2)
    N, S = 3, 5
    src = rng.standard_normal((N, S, 8) if batch_first else (S, N, 8))
    causal = np.triu(np.full((S, S), -np.inf), 1)
    kpm = np.zeros((N, S), dtype=bool)
    kpm[1, 3:] = True
    run_both(w, t, [src, causal, kpm],
             lambda mod, m, x, mask, pad: (mod(x, src_mask=mask, src_key_padding_mask=pad),))
    w.zero_grad(), t.zero_grad()
    run_both(w, t, [src], lambda mod, m, x: (mod(x),))


@needs_torch
def test_transformer_encoder_layer_callable_activation():
    w, t = encoder_pair(d_model=4, nhead=1, dim_feedforward=6,
                        activation=lambda x: x.tanh())
    src = np.random.default_rng(3).standard_normal((2, 3, 4))
    run_both(w, t, [src], lambda mod, m, x: (mod(x),))


@needs_torch
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("final_norm", [False, True])
def test_transformer_encoder_matches_torch(norm_first, final_norm):
    w, t = encoder_pair(num_layers=3, final_norm=final_norm, d_model=8, nhead=4,
                        dim_feedforward=12, norm_first=norm_first, batch_first=True)
    assert "layers.2.self_attn.in_proj_weight" in w.state_dict()
    rng = np.random.default_rng(6)
    src = rng.standard_normal((2, 6, 8))
    mask = wick.nn.Transformer.generate_square_subsequent_mask(6).numpy().astype(np.float64)
    kpm = np.array([[False] * 6, [False] * 4 + [True] * 2])
    run_both(w, t, [src, mask, kpm],
             lambda mod, m, x, mk, pad: (mod(x, mask=mk, src_key_padding_mask=pad),))


def test_transformer_encoder_copies_are_independent():
    layer = wick.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
    enc = wick.nn.TransformerEncoder(layer, 2)
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    with wick.no_grad():
        a.add_(1.0)
    assert not np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert not np.array_equal(a.detach().numpy(), layer.linear1.weight.detach().numpy())


@needs_torch
def test_generate_square_subsequent_mask():
    w = wick.nn.Transformer.generate_square_subsequent_mask(5)
    t = torch.nn.Transformer.generate_square_subsequent_mask(5)
    np.testing.assert_array_equal(w.numpy(), t.numpy())


def test_transformer_encoder_layer_eval_turns_dropout_off():
    wick.manual_seed(0)
    layer = wick.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = wick.randn(5, 2, 8)
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())
    layer.train()
    assert not np.array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_sdpa_16_bit_inputs_compute_in_float(dtype):
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((2, 70, 8), (2, 90, 8),
                                                                  (2, 90, 4))]
    low = [wick.tensor(a).to(getattr(wick, dtype)).requires_grad_() for a in arrays]
    full = [x.detach().float().requires_grad_() for x in low]  # the same rounded values
    F = wick.nn.functional
    out_low = F.scaled_dot_product_attention(*low, is_causal=True)
    out = F.scaled_dot_product_attention(*full, is_causal=True)
    assert out_low.dtype == getattr(wick, dtype)
    np.testing.assert_allclose(out_low.float().detach().numpy(), out.detach().numpy(), atol=2e-2)
    out_low.float().sum().backward()
    out.sum().backward()
    for a, b in zip(low, full):
        np.testing.assert_allclose(a.grad.float().numpy(), b.grad.numpy(), atol=5e-2)
