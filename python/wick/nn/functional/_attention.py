"""Attention in wick.nn.functional: scaled_dot_product_attention (PyTorch 2.0's, with 2.1's
keyword-only `scale`) and multi_head_attention_forward (PyTorch 1.13's signature). The math runs in
C++ (wick._C._attention); the shape assertions PyTorch makes with `assert` are made here, so a
mistake raises the same AssertionError with the same text."""

import wick
from wick import _C

_attn = _C._attention


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None):
    """softmax(q k^T * scale + mask) v, by a blocked kernel that never holds the L x S scores
    (docs/architecture.md, "Attention"). A bool attn_mask is True where attention is allowed; a
    float one is added to the scores. dropout_p > 0 materialises the probabilities."""
    return _attn.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                              scale=scale)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        assert key.dim() == 3 and value.dim() == 3, (
            "For batched (3-D) `query`, expected `key` and `value` to be 3-D"
            f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            assert key_padding_mask.dim() == 2, (
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead")
    elif query.dim() == 2:
        assert key.dim() == 2 and value.dim() == 2, (
            "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
            f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            assert key_padding_mask.dim() == 1, (
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                assert tuple(attn_mask.shape) == expected, (
                    f"Expected `attn_mask` shape to be {expected} but got {tuple(attn_mask.shape)}")
    else:
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True):
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k and static_v are not "
                                  "supported by wick")
    _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    embed_dim = query.shape[-1]
    assert embed_dim == embed_dim_to_check, (
        f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    assert embed_dim // num_heads * num_heads == embed_dim, (
        f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        assert tuple(key.shape[:-1]) == tuple(value.shape[:-1]), (
            f"key's sequence and batch dims {tuple(key.shape[:-1])} do not match value's "
            f"{tuple(value.shape[:-1])}")
        assert q_proj_weight is not None and k_proj_weight is not None and \
            v_proj_weight is not None, "use_separate_proj_weight is True but a q/k/v_proj_weight is None"
        in_proj_weight = None
    else:
        assert tuple(key.shape) == tuple(value.shape), (
            f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
        assert in_proj_weight is not None, \
            "use_separate_proj_weight is False but in_proj_weight is None"
        q_proj_weight = k_proj_weight = v_proj_weight = None
    if key_padding_mask is not None:
        assert key_padding_mask.dtype == wick.bool or key_padding_mask.is_floating_point(), \
            "only bool and floating types of key_padding_mask are supported"
        expected = tuple(key.shape[1::-1]) if key.dim() == 3 else tuple(key.shape[:1])
        assert tuple(key_padding_mask.shape) == expected, (
            f"expecting key_padding_mask shape of {expected}, but got "
            f"{tuple(key_padding_mask.shape)}")
    if attn_mask is not None:
        assert attn_mask.is_floating_point() or attn_mask.dtype == wick.bool, (
            f"Only float, byte, and bool types are supported for attn_mask, not {attn_mask.dtype}")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    return _attn.multi_head_attention_forward(
        query, key, value, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
        add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
        need_weights, attn_mask, q_proj_weight, k_proj_weight, v_proj_weight,
        average_attn_weights)
