"""cumsum, cumprod, prod, sort, argsort, topk and median against PyTorch: values, indices,
dtypes, gradients (gradcheck in float64, including cumprod through zeros), NaN ordering, ties,
0-d and empty tensors, and bad arguments."""

import numpy as np
import pytest

import wick
from reference import check, needs_torch, torch

pytestmark = needs_torch


def same(w, t):
    assert str(w.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(w.numpy(), t.numpy(), rtol=1e-6, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_scans_match_pytorch(dim):
    check(lambda m, x: (x.cumsum(dim), x.cumprod(dim), m.prod(x, dim), x.prod(dim, keepdim=True)),
          [(3, 4, 5)])
    check(lambda m, x: (x.cumsum(dim), x.cumprod(dim)), [(3, 4, 5)], noncontig=True, seed=1)


def test_integer_scans_accumulate_in_int64_unless_told():
    for dtype in (np.int32, np.int64, np.bool_):
        data = np.random.default_rng(0).integers(0, 3, (3, 4)).astype(dtype)
        for fn in (lambda m, x: x.cumsum(1), lambda m, x: m.cumprod(x, 0), lambda m, x: x.prod(),
                   lambda m, x: x.cumsum(0, dtype=m.float64), lambda m, x: x.prod(1)):
            same(fn(wick, wick.tensor(data)), fn(torch, torch.tensor(data)))


def test_cumprod_and_prod_gradients_through_zeros():
    x = np.array([[2.0, 0.0, 3.0, 4.0], [0.0, 1.5, 0.0, 2.0], [1.0, 2.0, 3.0, 0.0]])
    check(lambda m, x: (x.cumprod(1), x.prod(1), x.prod()), [x])
    check(lambda m, x: x.cumprod(0), [x])
    t = wick.tensor(x, requires_grad=True)
    assert wick.autograd.gradcheck(lambda a: a.cumprod(1), (t,))
    assert wick.autograd.gradcheck(lambda a: a.prod(), (t,))


def test_scan_gradcheck_and_second_derivatives():
    t = wick.tensor(np.random.default_rng(1).uniform(0.5, 2, (3, 4)), requires_grad=True)
    for fn in (lambda a: a.cumsum(1), lambda a: a.cumprod(0), lambda a: a.prod(1)):
        assert wick.autograd.gradcheck(fn, (t,))
        assert wick.autograd.gradgradcheck(fn, (t,))


def test_scans_of_0d_and_empty_tensors():
    for data in (np.array(2.5), np.zeros((0, 3)), np.zeros((2, 0))):
        for fn in (lambda m, x: x.cumsum(0), lambda m, x: x.cumprod(-1), lambda m, x: x.prod(),
                   lambda m, x: x.prod(0)):
            same(fn(wick, wick.tensor(data)), fn(torch, torch.tensor(data)))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_values_and_indices_match_pytorch(dim, descending):
    rng = np.random.default_rng(2)
    data = rng.standard_normal((4, 5, 6))
    w, t = wick.tensor(data), torch.tensor(data)
    wv, wi = wick.sort(w, dim, descending)
    tv, ti = torch.sort(t, dim, descending)
    same(wv, tv)
    same(wi, ti)
    same(w.argsort(dim, descending), t.argsort(dim, descending))
    check(lambda m, x: m.sort(x, dim, descending=descending)[0], [data])
    check(lambda m, x: x.sort(dim)[0], [data], noncontig=True)


def test_sort_is_stable_and_puts_nan_last():
    data = np.array([3.0, np.nan, 1.0, 3.0, -np.inf, 1.0, np.nan, np.inf])
    w, t = wick.tensor(data), torch.tensor(data)
    for descending in (False, True):
        wv, wi = w.sort(descending=descending)
        tv, ti = t.sort(descending=descending, stable=True)
        same(wv, tv)
        same(wi, ti)
    ints = np.array([2, 1, 2, 1, 0, 2])
    same(wick.tensor(ints).sort(stable=True)[1], torch.tensor(ints).sort(stable=True)[1])
    same(wick.tensor(ints > 0).sort()[0], torch.tensor(ints > 0).sort()[0])


@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_pytorch(largest):
    data = np.random.default_rng(3).standard_normal((5, 7))
    for k, dim in ((3, 1), (2, 0), (7, -1), (0, 1)):
        wv, wi = wick.topk(wick.tensor(data), k, dim, largest)
        tv, ti = torch.topk(torch.tensor(data), k, dim, largest)
        same(wv, tv)
        same(wi, ti)
    check(lambda m, x: x.topk(3, largest=largest).values, [data])
    t = wick.tensor(data, requires_grad=True)
    assert wick.autograd.gradcheck(lambda a: a.topk(2, 0)[0], (t,))


def test_median_matches_pytorch():
    rng = np.random.default_rng(4)
    for shape in ((7,), (6,), (4, 5)):
        data = rng.standard_normal(shape)
        same(wick.median(wick.tensor(data)), torch.median(torch.tensor(data)))
        check(lambda m, x: x.median(), [data])
    data = rng.standard_normal((4, 6))
    for dim in (0, 1):
        for keepdim in (False, True):
            wv, wi = wick.tensor(data).median(dim, keepdim)
            tv, ti = torch.tensor(data).median(dim, keepdim)
            same(wv, tv)
            same(wi, ti)
    check(lambda m, x: x.median(1).values, [data])
    with_nan = np.array([[1.0, np.nan, 0.5], [2.0, 3.0, 1.0]])
    same(wick.tensor(with_nan).median(), torch.tensor(with_nan).median())
    same(wick.tensor(with_nan).median(1)[0], torch.tensor(with_nan).median(1)[0])


def test_bad_arguments_raise():
    x = wick.zeros(3, 4)
    with pytest.raises(IndexError, match="cumsum"):
        x.cumsum(2)
    with pytest.raises(IndexError, match="sort"):
        x.sort(-3)
    with pytest.raises(IndexError, match="topk.*out of range"):
        x.topk(5)
    with pytest.raises(IndexError, match="topk"):
        x.topk(-1)
    with pytest.raises(IndexError, match="median.*empty"):
        wick.zeros(0).median()
    with pytest.raises(TypeError):
        x.cumsum("0")
