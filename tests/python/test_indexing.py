"""Indexing and assignment against PyTorch: ints, slices, None, Ellipsis, boolean masks, integer
tensors and lists, with gradients; negative steps are refused as in PyTorch."""

import numpy as np
import pytest

import wick
from reference import check, needs_torch

KEYS = [
    lambda m: 1,
    lambda m: -1,
    lambda m: (slice(None), 2),
    lambda m: (slice(1, None), slice(None, None, 2)),
    lambda m: (Ellipsis, 1),
    lambda m: (None, 0, Ellipsis, None),
    lambda m: (slice(0, 2), None, slice(None)),
    lambda m: m.tensor([2, 0, 2]),
    lambda m: [0, 2],
    lambda m: (slice(None), m.tensor([[0, 1], [2, 3]])),
    lambda m: (m.tensor([0, 2]), slice(None), m.tensor([1, 3])),
    lambda m: (m.tensor([0, 2]), m.tensor([1, 3])),
    lambda m: (1, m.tensor([0, 3]), slice(1, 3)),
    lambda m: (Ellipsis, m.tensor([4, 0])),
]


@needs_torch
@pytest.mark.parametrize("key", range(len(KEYS)))
def test_getitem_matches_torch(key):
    check(lambda m, x: x[KEYS[key](m)], [(3, 4, 5)])
    check(lambda m, x: x[KEYS[key](m)], [(3, 4, 5)], noncontig=True)


@needs_torch
def test_boolean_masks():
    check(lambda m, x: x[x > 0], [(3, 4)])
    check(lambda m, x: x[x[:, 0] > 0], [(5, 3)])
    check(lambda m, x: x[:, m.tensor([True, False, True, True])], [(2, 4)])
    check(lambda m, x: x.masked_select(x > 0.5), [(3, 4)])


@needs_torch
def test_setitem_matches_torch():
    def assign(m, x):
        y = x * 1.0  # a non-leaf copy that we may write into
        y[0] = 5.0
        y[1, 1:3] = m.tensor([7.0, 8.0], dtype=y.dtype)
        y[y > 6] = 0.0
        y[m.tensor([2, 2])] = m.tensor(-1.0, dtype=y.dtype)
        y[..., 0] = y[..., 1]
        return y
    check(assign, [(3, 4)], grad=False)


@needs_torch
def test_setitem_gradients():
    def assign(m, x, v):
        y = x * 2
        y[m.tensor([0, 2])] = v
        return y
    check(assign, [(3, 4), (4,)])


def test_basic_index_is_a_view():
    x = wick.zeros(3, 4)
    v = x[1]
    v += 1
    assert x.sum().item() == 4
    x[:, 0] = 9
    assert x[2, 0].item() == 9


def test_negative_step_refused():
    with pytest.raises(ValueError, match="step must be greater than zero"):
        wick.zeros(4)[::-1]


def test_index_errors():
    x = wick.zeros(3, 4)
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[wick.tensor([5])]
    with pytest.raises(IndexError):
        x[wick.tensor([True, False])]
    with pytest.raises(TypeError):
        x["a"]
    with pytest.raises(TypeError):
        x[1.5]
    with pytest.raises(IndexError):
        x[..., ...]
    with pytest.raises(TypeError):
        x[0] = "text"
    with pytest.raises(ValueError):
        x[0] = wick.zeros(5)


def test_leaf_assignment_refused_under_autograd():
    p = wick.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        p[0] = 1.0
    with wick.no_grad():
        p[0] = 1.0  # what optimizers and init do
    assert p[0].item() == 1.0


def test_numpy_like_placement():
    x = wick.arange(60).reshape(3, 4, 5)
    a = np.arange(60).reshape(3, 4, 5)
    i, j = [0, 2], [1, 3]
    np.testing.assert_array_equal(x[:, wick.tensor(i), wick.tensor(j)].numpy(), a[:, i, j])
    np.testing.assert_array_equal(x[wick.tensor(i), :, wick.tensor(j)].numpy(), a[i, :, j])
    np.testing.assert_array_equal(x[x > 40].numpy(), a[a > 40])
