"""Lab 01's graded tests: every answer is compared with what wick's own tensors do."""

import pytest
import wick
from labkit import impl

S = impl(__file__, "strides")


def test_contiguous_strides():
    for shape in [(2, 3, 4), (5,), (1, 7), (3, 1, 2)]:
        assert S.contiguous_strides(shape) == wick.zeros(*shape).stride()


def test_is_contiguous():
    t = wick.zeros(2, 3, 4)
    for v in [t, t.permute(2, 0, 1), t.transpose(0, 1), t[:, 1:2, :], t[:, :, ::2]]:
        assert S.is_contiguous(tuple(v.shape), v.stride()) == v.is_contiguous()


def test_element_offset_matches_as_strided():
    base = wick.arange(100.0)
    flat = base.tolist()
    for shape, strides, off in [((3, 4), (10, 2), 5), ((2, 2, 2), (1, 7, 30), 3)]:
        v = base.as_strided(shape, strides, off)
        for i in range(shape[0]):
            for j in range(shape[1]):
                idx = (i, j) + (1,) * (len(shape) - 2)
                assert flat[S.element_offset(idx, strides, off)] == v[idx].item()


def test_permute():
    t = wick.zeros(2, 3, 4)
    for dims in [(2, 0, 1), (1, 0, 2), (0, 1, 2)]:
        p = t.permute(*dims)
        assert S.permute((2, 3, 4), t.stride(), dims) == (tuple(p.shape), p.stride())


def test_broadcast_shapes():
    for a, b in [((3, 1), (1, 4)), ((5, 1, 3), (4, 1)), ((2,), (2,))]:
        assert S.broadcast_shapes(a, b) == tuple((wick.zeros(*a) + wick.zeros(*b)).shape)
    with pytest.raises(ValueError):
        S.broadcast_shapes((3,), (4,))


def test_expand_has_zero_strides():
    t = wick.zeros(3, 1)
    e = t.expand(2, 3, 4)
    assert S.expand((3, 1), t.stride(), (2, 3, 4)) == ((2, 3, 4), e.stride())
    with pytest.raises(ValueError):
        S.expand((3, 2), (2, 1), (3, 4))


def test_view_after_permute_fails():
    t = wick.arange(24.0).reshape(2, 3, 4)
    p = t.permute(1, 0, 2)  # (3, 2, 4), strides (4, 12, 1)
    assert S.view_strides((3, 2, 4), p.stride(), (24,)) is None
    with pytest.raises((RuntimeError, ValueError)):  # PyTorch: RuntimeError; wick: ValueError
        p.view(24)  # wick refuses too ...
    assert S.view_strides((3, 2, 4), p.stride(), (3, 8)) is None
    # ... but merging the last two dims of the original, or splitting one, is a view:
    for shape in [(6, 4), (2, 12), (2, 3, 2, 2), (24,)]:
        assert S.view_strides((2, 3, 4), t.stride(), shape) == t.view(*shape).stride()
    assert S.view_strides((3, 2, 4), p.stride(), (3, 2, 2, 2)) == p.view(3, 2, 2, 2).stride()


def test_contiguous_copies_in_row_major_order():
    t = wick.arange(24.0).reshape(2, 3, 4)
    storage = t.flatten().tolist()
    for v in [t.permute(2, 0, 1), t.transpose(0, 2)[1:, :, ::2], t.expand(2, 2, 3, 4)]:
        got = S.contiguous(storage, tuple(v.shape), v.stride(), v.storage_offset())
        assert got == v.contiguous().flatten().tolist()
