"""The composite ops (core/ops/composite_*.h) against PyTorch 1.13: values and gradients on
random contiguous and non-contiguous inputs, gradcheck and gradgradcheck in float64 (they are
compositions, so second derivatives must come for free), einsum on a table of equations, the
random ops by their statistics and seeds, and bad inputs by PyTorch's exception types."""

import warnings

import numpy as np
import pytest
import wick

from reference import check, needs_torch, torch

pytestmark = needs_torch

RNG = np.random.default_rng(7)


def ints(low, high, shape, seed=0):
    return np.random.default_rng(seed).integers(low, high, shape).astype(np.int64)


def grad_checks(fn, shapes, seed=0):
    """gradcheck and gradgradcheck of fn(wick, *inputs) on float64 inputs requiring grad."""
    rng = np.random.default_rng(seed)
    inputs = [wick.tensor(rng.standard_normal(s)).requires_grad_(True) for s in shapes]
    f = lambda *xs: fn(wick, *xs)  # noqa: E731
    assert wick.autograd.gradcheck(f, inputs)
    assert wick.autograd.gradgradcheck(f, inputs)


# ---- shape ----

@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("k", [0, 1, -1, 5, -5])
@pytest.mark.parametrize("noncontig", [False, True])
def test_tril_triu(name, k, noncontig):
    check(lambda m, x: getattr(m, name)(x, k), [(4, 5)], noncontig=noncontig)
    check(lambda m, x: getattr(x, name)(diagonal=k), [(2, 3, 4)], noncontig=noncontig)


def test_tril_triu_int_and_gradcheck():
    check(lambda m, x: m.tril(x, -1), [ints(-5, 5, (3, 3))])
    mask = wick.ones(3, 4, dtype=wick.bool).triu(1)  # a causal mask stays bool
    assert mask.dtype == wick.bool
    assert mask.tolist() == torch.ones(3, 4, dtype=torch.bool).triu(1).tolist()
    grad_checks(lambda m, x: m.triu(x, 1), [(3, 4)])


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (-1, 0), (0, 2)])
@pytest.mark.parametrize("noncontig", [False, True])
def test_flip(dims, noncontig):
    check(lambda m, x: m.flip(x, dims), [(3, 4, 2)], noncontig=noncontig)
    check(lambda m, x: x.flip(*dims), [(2, 3, 4)], noncontig=noncontig)


@pytest.mark.parametrize("shifts,dims", [(1, 0), (-2, 1), ((1, 2), (0, 1)), (7, None),
                                         ((3, -1), (1, 0)), (0, 0)])
@pytest.mark.parametrize("noncontig", [False, True])
def test_roll(shifts, dims, noncontig):
    check(lambda m, x: m.roll(x, shifts, dims), [(3, 4)], noncontig=noncontig)
    check(lambda m, x: x.roll(shifts, dims), [(3, 4)], noncontig=noncontig)


def test_shape_gradchecks():
    grad_checks(lambda m, x: m.flip(x, (0, 1)), [(3, 2)])
    grad_checks(lambda m, x: m.roll(x, (1, -1), (0, 1)), [(3, 2)])
    grad_checks(lambda m, x: m.tile(x, (2, 1, 2)), [(2, 3)])
    grad_checks(lambda m, x: m.repeat_interleave(x, 2, dim=1), [(2, 3)])
    grad_checks(lambda m, x: m.take(x, wick.tensor([0, 5, -1, 2])), [(2, 3)])
    grad_checks(lambda m, x: m.movedim(x, 0, -1), [(2, 3, 2)])


@pytest.mark.parametrize("reps", [(2,), (2, 3), (1, 2, 1), (2, 1, 1, 2), (0, 1)])
def test_tile(reps):
    check(lambda m, x: m.tile(x, reps), [(2, 3)], noncontig=True)
    check(lambda m, x: x.tile(*reps), [(3,)])


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_repeat_interleave_int(dim):
    check(lambda m, x: m.repeat_interleave(x, 3, dim=dim), [(2, 3)], noncontig=True)
    check(lambda m, x: x.repeat_interleave(2, dim), [(2, 3)])


def test_repeat_interleave_tensor():
    reps = np.array([1, 0, 3], dtype=np.int64)
    check(lambda m, x, r: m.repeat_interleave(x, r, dim=1), [(2, 3), reps], noncontig=True)
    check(lambda m, x, r: x.repeat_interleave(r, dim=0), [(3, 2), reps])
    check(lambda m, x, r: m.repeat_interleave(x, r), [(3,), np.array(2)])
    check(lambda m, r: m.repeat_interleave(r), [reps])


def test_broadcast_movedim_unflatten():
    check(lambda m, x: m.broadcast_to(x, (2, 3, 4)), [(3, 1)], noncontig=True)
    check(lambda m, x: x.broadcast_to((5, -1)), [(4,)])
    for src, dst in [(0, 2), (-1, 0), ((0, 1), (2, 0)), ([2, 0], [0, 1])]:
        check(lambda m, x: m.movedim(x, src, dst), [(2, 3, 4)], noncontig=True)
        check(lambda m, x: x.moveaxis(src, dst), [(2, 3, 4)])
    check(lambda m, x: m.unflatten(x, 1, (2, 3)), [(4, 6)], noncontig=True)
    check(lambda m, x: x.unflatten(-1, (-1, 2)), [(3, 4)])


def test_take():
    idx = np.array([[0, 11], [-1, 4]], dtype=np.int64)
    check(lambda m, x, i: m.take(x, i), [(3, 4), idx], noncontig=True)
    check(lambda m, x, i: x.take(i), [(3, 4), idx[0]])


# ---- linear algebra ----

@pytest.mark.parametrize("k", [0, 1, -2, 4])
@pytest.mark.parametrize("noncontig", [False, True])
def test_diag(k, noncontig):
    # PyTorch 1.13 overflows on a 2-D diagonal past the matrix (k = 4 here); -3 is the last one.
    k2 = -3 if k == 4 else k
    check(lambda m, x: m.diag(x, k2), [(4, 3)], noncontig=noncontig)
    check(lambda m, x: x.diag(k), [(3,)])


@pytest.mark.parametrize("args", [(0, 0, 1), (1, 0, 1), (-1, 1, 0), (2, -1, 0), (0, 0, 2),
                                  (-1, 2, 1), (9, 0, 1)])
@pytest.mark.parametrize("noncontig", [False, True])
def test_diagonal(args, noncontig):
    check(lambda m, x: m.diagonal(x, *args), [(3, 4, 5)], noncontig=noncontig)
    check(lambda m, x: x.diagonal(offset=args[0], dim1=args[1], dim2=args[2]), [(4, 4, 4)],
          noncontig=noncontig)


def test_diagonal_is_a_view():
    x = wick.zeros(3, 3)
    d = x.diagonal()
    d.fill_(1.0)
    assert x.sum().item() == 3.0
    x = wick.arange(12.0).reshape(3, 4).t()  # non-contiguous, still a view
    assert x.diagonal(1).tolist() == torch.arange(12.0).reshape(3, 4).t().diagonal(1).tolist()


def test_trace_dot_outer():
    check(lambda m, x: m.trace(x), [(4, 3)], noncontig=True)
    check(lambda m, x: x.trace(), [ints(-9, 9, (3, 3))])
    check(lambda m, a, b: m.dot(a, b), [(5,), (5,)])
    check(lambda m, a, b: a.dot(b), [(5,), (5,)])
    check(lambda m, a, b: m.outer(a, b), [(3,), (4,)])
    check(lambda m, a, b: a.outer(b), [(3,), (2,)])


def test_linalg_gradchecks():
    grad_checks(lambda m, x: m.diag(x, 1), [(3,)])
    grad_checks(lambda m, x: m.diag(x, -1), [(3, 4)])
    grad_checks(lambda m, x: m.diagonal(x.t(), 1, 0, 1), [(3, 4)])
    grad_checks(lambda m, x: m.trace(x), [(3, 3)])
    grad_checks(lambda m, a, b: m.dot(a, b), [(4,), (4,)])
    grad_checks(lambda m, a, b: m.outer(a, b), [(2,), (3,)])
    grad_checks(lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2), [(2, 1), (2, 3), (3, 2)])
    grad_checks(lambda m, a, b: m.tensordot(a, b, dims=([1, 0], [0, 2])),
                [(2, 3), (3, 2, 2)])
    grad_checks(lambda m, a, b: m.kron(a, b), [(2, 2), (1, 3)])
    grad_checks(lambda m, a, b: m.cross(a, b, dim=0), [(3, 2), (3, 2)])
    grad_checks(lambda m, a, b: m.cdist(a, b), [(3, 2), (4, 2)])
    grad_checks(lambda m, a, b: m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                [(3, 2), (4, 2)])


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1), (2, 0)])
def test_addmm_baddbmm(beta, alpha):
    check(lambda m, c, a, b: m.addmm(c, a, b, beta=beta, alpha=alpha),
          [(3, 4), (3, 2), (2, 4)], noncontig=True)
    check(lambda m, c, a, b: c.addmm(a, b, beta=beta, alpha=alpha), [(4,), (3, 2), (2, 4)])
    # PyTorch 1.13's baddbmm with beta=0 reads output memory it never wrote (NaNs appear at
    # random, contiguous inputs or not), so with beta=0 the reference is alpha * bmm, which is
    # what beta=0 means.
    def baddbmm(m, c, a, b):
        if beta == 0 and m is not wick:
            return alpha * m.bmm(a, b) + 0 * c  # 0 * c: c gets the zero gradient beta=0 gives
        return m.baddbmm(c, a, b, beta=beta, alpha=alpha)

    check(baddbmm, [(2, 3, 4), (2, 3, 5), (2, 5, 4)], noncontig=True)


def test_addmm_beta_zero_ignores_nan():
    c = wick.full((2, 2), float("nan"))
    out = wick.addmm(c, wick.ones(2, 3), wick.ones(3, 2), beta=0)
    assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("dims", [0, 1, 2, ([1], [0]), ([0, 2], [1, 0])])
def test_tensordot(dims):
    shapes = {0: [(2, 3), (4,)], 1: [(2, 3), (3, 4)], 2: [(2, 3, 4), (3, 4, 5)],
              str(([1], [0])): [(2, 3), (3, 4)], str(([0, 2], [1, 0])): [(2, 3, 4), (4, 2)]}
    key = dims if isinstance(dims, int) else str(dims)
    check(lambda m, a, b: m.tensordot(a, b, dims=dims), shapes[key], noncontig=True)


@pytest.mark.parametrize("shapes", [[(2, 3), (3, 2)], [(3,), (2,)], [(2, 1, 2), (3, 2)],
                                    [(2, 2), (2, 2, 2)]])
def test_kron(shapes):
    # PyTorch 1.13's kron fails on some non-contiguous 3-D inputs (a view() inside it).
    check(lambda m, a, b: m.kron(a, b), shapes, noncontig=len(shapes[0]) == len(shapes[1]) == 2)
    check(lambda m, a, b: a.kron(b), shapes)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),          # matmul
    ("ij,jk", [(3, 4), (4, 2)]),              # implicit output
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),  # batch matmul
    ("ii", [(4, 4)]),                         # trace
    ("ii->i", [(4, 4)]),                      # diagonal
    ("i,j->ij", [(3,), (4,)]),                # outer
    ("ij->ji", [(3, 4)]),                     # transpose
    ("ij", [(3, 4)]),                         # identity
    ("ba", [(3, 4)]),                         # implicit transpose (sorted output)
    ("ij->", [(3, 4)]),                       # sum of all
    ("ijk->j", [(2, 3, 4)]),                  # sum over some
    ("...ij->...ji", [(2, 3, 4, 5)]),         # ellipsis transpose
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),     # ellipsis broadcast matmul
    ("i,i->", [(5,), (5,)]),                  # dot
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),  # bilinear, three operands
    ("iij->j", [(3, 3, 2)]),                  # diagonal then sum
    ("i j , j k -> i k", [(2, 3), (3, 4)]),   # spaces
    ("ab,ab->a", [(3, 4), (3, 4)]),           # row-wise dot (batch dim, contracted)
    ("i...->...", [(3, 2, 2)]),               # sum the labelled dim away
]


@pytest.mark.parametrize("equation,shapes", EINSUM, ids=[e for e, _ in EINSUM])
@pytest.mark.parametrize("noncontig", [False, True])
def test_einsum(equation, shapes, noncontig):
    check(lambda m, *xs: m.einsum(equation, *xs), shapes, noncontig=noncontig)


def test_einsum_list_form_and_gradgrad():
    check(lambda m, a, b: m.einsum("ij,jk->ik", [a, b]), [(2, 3), (3, 2)])
    grad_checks(lambda m, a, b: m.einsum("bij,bjk->bik", a, b), [(2, 2, 3), (2, 3, 2)])
    grad_checks(lambda m, a: m.einsum("ii->i", a), [(3, 3)])
    grad_checks(lambda m, a, b, c: m.einsum("bn,anm,bm->ba", a, b, c),
                [(2, 3), (2, 3, 2), (2, 2)])


def _random_equation(rng, sizes):
    """Up to three operands of up to three subscripts from "abcde", sometimes with "..." and an
    explicit output; with the operands' shapes."""
    terms = ["".join(rng.choice(list(sizes), int(rng.integers(0, 4))))
             for _ in range(int(rng.integers(1, 4)))]
    if rng.random() < 0.3:
        terms = [("..." + t) if rng.random() < 0.7 else t for t in terms]
    equation = ",".join(terms)
    used = sorted(set("".join(terms).replace(".", "")))
    if rng.random() < 0.5:
        out = "".join(rng.permutation(used)[: int(rng.integers(0, len(used) + 1))])
        if "..." in equation and rng.random() < 0.7:
            out = "..." + out
        equation += "->" + out
    shapes = [([int(rng.choice([1, 2]))] if "..." in t else []) +
              [sizes[c] for c in t.replace("...", "")] for t in terms]
    return equation, shapes


def test_einsum_random_equations():
    """200 random equations (repeated subscripts, broadcasting ellipses, implicit and explicit
    outputs, sums): values and gradients as PyTorch's, or an error where PyTorch raises."""
    rng = np.random.default_rng(0)
    sizes = {c: int(rng.integers(1, 4)) for c in "abcde"}
    for _ in range(200):
        equation, shapes = _random_equation(rng, sizes)
        arrays = [rng.standard_normal(s) for s in shapes]
        try:
            torch.einsum(equation, *[torch.tensor(a) for a in arrays])
        except RuntimeError:
            with pytest.raises(RuntimeError):
                wick.einsum(equation, *[wick.tensor(a) for a in arrays])
            continue
        check(lambda m, *xs: m.einsum(equation, *xs), arrays, atol=1e-10)


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_cross(dim):
    shape = (3, 3) if dim is None else ((3, 4) if dim == 0 else (4, 3))
    check(lambda m, a, b: m.cross(a, b, dim=dim), [shape, shape], noncontig=True)
    cross_dim = 0 if dim in (None, 0) else 1
    broadcast = tuple(3 if d == cross_dim else 1 for d in range(2))
    check(lambda m, a, b: a.cross(b, dim), [shape, broadcast])


@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, 3.0, float("inf")])
@pytest.mark.parametrize("sizes", [(3, 4), (30, 5)])
def test_cdist(p, sizes):
    n1, n2 = sizes
    atol = 1e-5 if p == 2.0 else 1e-6
    check(lambda m, a, b: m.cdist(a, b, p=p), [(n1, 3), (n2, 3)], atol=atol)
    check(lambda m, a, b: m.cdist(a, b, p=p), [(2, n1, 3), (2, n2, 3)], noncontig=True, atol=atol)


def test_cdist_modes_and_zero_distance_gradient():
    for mode in ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]:
        check(lambda m, a, b: m.cdist(a, b, compute_mode=mode), [(3, 2), (4, 2)], atol=1e-5)
    x = np.array([[0.0, 1.0], [2.0, 3.0]])
    for mode in ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]:
        check(lambda m, a, b: m.cdist(a, b, compute_mode=mode), [x, x.copy()], atol=1e-5)


# ---- statistics, search, counting, scatter ----

def test_lerp():
    check(lambda m, a, b: m.lerp(a, b, 0.3), [(3, 4), (3, 4)], noncontig=True)
    check(lambda m, a, b, w: a.lerp(b, w), [(3, 4), (4,), (3, 1)])
    grad_checks(lambda m, a, b, w: m.lerp(a, b, w), [(2, 3), (2, 3), (3,)])


def test_isclose():
    a = RNG.standard_normal((3, 4))
    b = a + RNG.choice([0, 1e-7, 1e-3, np.nan, np.inf], size=a.shape)
    a[0, 0] = np.nan
    b[0, 0] = np.nan
    for kw in [{}, {"equal_nan": True}, {"rtol": 1e-2, "atol": 0}, {"atol": 1e-2}]:
        check(lambda m, x, y: m.isclose(x, y, **kw), [a, b])
        check(lambda m, x, y: x.isclose(y, **kw), [a, b[0]])
    check(lambda m, x, y: m.isclose(x, y), [ints(0, 3, (4,)), ints(0, 3, (4,), 1)])


@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": (0, 2), "keepdim": True},
                                {"unbiased": False}, {"dim": 0, "correction": 0}])
def test_var_mean(kw):
    check(lambda m, x: m.var_mean(x, **kw), [(3, 4, 2)], noncontig=True)
    grad_checks(lambda m, x: m.var_mean(x, **kw), [(3, 2, 2)])


def test_count_nonzero():
    x = RNG.integers(-1, 2, (3, 4, 5)).astype(np.float64)
    for dim in [None, 0, (1, 2), -1]:
        check(lambda m, t: m.count_nonzero(t, dim=dim), [x], noncontig=True)
        check(lambda m, t: t.count_nonzero(dim), [x])


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_searchsorted(right):
    seq = np.array([1.0, 2.0, 2.0, 3.5, 7.0])
    values = np.array([[0.0, 1.0, 2.0], [2.5, 7.0, 9.0]])
    check(lambda m, v, s: m.bucketize(v, s, right=right), [values, seq])
    check(lambda m, v, s: m.bucketize(v, s, out_int32=True, right=right), [values, seq])
    check(lambda m, s, v: m.searchsorted(s, v, right=right), [seq, values])
    side = "right" if right else "left"
    check(lambda m, s, v: m.searchsorted(s, v, side=side), [seq, values])
    rows = np.sort(RNG.standard_normal((2, 6)), axis=1)
    vals = RNG.standard_normal((2, 3))
    check(lambda m, s, v: m.searchsorted(s, v, right=right), [rows, vals])
    unsorted = RNG.standard_normal(6)
    sorter = np.argsort(unsorted).astype(np.int64)
    check(lambda m, s, v, o: m.searchsorted(s, v, sorter=o), [unsorted, vals[0], sorter])
    check(lambda m, s: m.bucketize(2.0, s, right=right), [seq])


def test_histc():
    x = RNG.standard_normal(200)
    check(lambda m, t: m.histc(t, bins=10, min=-2, max=2), [x])
    check(lambda m, t: t.histc(5), [x])
    check(lambda m, t: m.histc(t, bins=4), [np.full(5, 3.0)])
    check(lambda m, t: m.histc(t, bins=7, min=-1, max=1), [x.astype(np.float32)])


def test_bincount():
    x = ints(0, 6, (20,))
    w = RNG.standard_normal(20)
    check(lambda m, t: m.bincount(t), [x])
    check(lambda m, t: t.bincount(minlength=10), [x])
    check(lambda m, t, u: m.bincount(t, u), [x, w], grad=False)
    check(lambda m, t, u: m.bincount(t, weights=u), [x, w.astype(np.float32)], grad=False)
    check(lambda m, t, u: m.bincount(t, u), [x, ints(0, 3, (20,))])
    check(lambda m, t: m.bincount(t), [np.zeros(0, dtype=np.int64)])


def test_unique():
    x = ints(0, 5, (3, 4))
    check(lambda m, t: m.unique(t), [x])
    check(lambda m, t: t.unique(return_inverse=True, return_counts=True), [x])
    check(lambda m, t: m.unique(t, return_counts=True), [x])
    check(lambda m, t: m.unique(t, return_inverse=True), [x.T])
    f = np.array([2.5, -1.0, 2.5, 0.0, -1.0])
    check(lambda m, t: m.unique(t, return_inverse=True, return_counts=True), [f], grad=False)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter(dim):
    x = (3, 4)
    idx = np.stack([RNG.permutation(3 if dim == 0 else 4)[:2] for _ in range(2)])
    idx = idx if dim != 0 else idx.T  # unique positions: the result does not depend on order
    check(lambda m, a, i, s: m.scatter(a, dim, i, s), [x, idx, (2, 2)])
    check(lambda m, a, i, s: a.scatter(dim, i, s), [x, idx, (2, 2)], noncontig=True)
    # A src larger than index: PyTorch 1.13's backward fails on it, so values only.
    src = (3, 3)
    check(lambda m, a, i, s: m.scatter(a, dim, i, s), [x, idx, src], grad=False)
    check(lambda m, a, i: m.scatter(a, dim, i, 2.5), [x, idx])
    check(lambda m, a, i: a.scatter(dim, i, value=-1.0), [x, idx])
    grad_checks(lambda m, a, s: m.scatter(a, dim, wick.tensor(idx), s), [x, src])


def test_scatter_inplace():
    for m in (wick, torch):
        x = m.zeros(3, 4)
        out = x.scatter_(1, m.tensor([[0, 2], [1, 3], [3, 0]]), m.ones(3, 2) * 5)
        assert out is x
        if m is wick:
            w = x.tolist()
        else:
            assert x.tolist() == w
    a = wick.ones(2, 3, requires_grad=True)
    y = a * 2
    y.scatter_(0, wick.tensor([[1, 0, 1]]), 0.0)
    y.sum().backward()
    assert a.grad.tolist() == [[2.0, 0.0, 2.0], [0.0, 2.0, 0.0]]


# ---- random ----

def test_randperm():
    for n in [0, 1, 10, 257]:
        p = wick.randperm(n)
        assert p.dtype == wick.int64 and sorted(p.tolist()) == list(range(n))
    wick.manual_seed(3)
    a = wick.randperm(50).tolist()
    wick.manual_seed(3)
    assert wick.randperm(50).tolist() == a
    g = wick.Generator().manual_seed(5)
    assert wick.randperm(20, generator=g).tolist() == \
        wick.randperm(20, generator=wick.Generator().manual_seed(5)).tolist()
    assert wick.randperm(4, dtype=wick.float64).dtype == wick.float64
    # Each position is uniform: the mean of position 0 over many draws is near (n - 1) / 2.
    firsts = [wick.randperm(5)[0].item() for _ in range(2000)]
    assert abs(np.mean(firsts) - 2.0) < 4 * np.sqrt(2.0 / 2000)


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies(replacement):
    probs = np.array([0.1, 0.0, 0.5, 0.4])
    n = 20000
    if replacement:
        s = wick.multinomial(wick.tensor(probs), n, replacement=True)
        assert s.shape == (n,) and s.dtype == wick.int64
        counts = np.bincount(s.numpy(), minlength=4)
        se = np.sqrt(n * probs * (1 - probs))
        assert counts[1] == 0
        assert np.all(np.abs(counts - n * probs) <= 5 * se + 1)
    else:
        draws = wick.multinomial(wick.tensor(probs).expand(n, 4).contiguous(), 1)
        assert draws.shape == (n, 1)
        counts = np.bincount(draws.numpy().ravel(), minlength=4)
        se = np.sqrt(n * probs * (1 - probs))
        assert np.all(np.abs(counts - n * probs) <= 5 * se + 1)
        full = wick.multinomial(wick.tensor([[1.0, 2, 3], [3, 0.5, 1]]), 3)
        assert [sorted(r) for r in full.tolist()] == [[0, 1, 2], [0, 1, 2]]


def test_multinomial_seeded():
    p = wick.tensor([[0.2, 0.3, 0.5], [1.0, 1.0, 1.0]])
    for replacement in (True, False):
        a = wick.multinomial(p, 2, replacement, generator=wick.Generator().manual_seed(9))
        b = wick.multinomial(p, 2, replacement, generator=wick.Generator().manual_seed(9))
        assert a.tolist() == b.tolist()
        wick.manual_seed(1)
        c = p.multinomial(2, replacement)
        wick.manual_seed(1)
        assert p.multinomial(2, replacement).tolist() == c.tolist()


def test_normal():
    wick.manual_seed(0)
    mean = wick.tensor([0.0, 10.0, -5.0]).expand(20000, 3)
    std = wick.tensor([1.0, 0.5, 3.0])
    s = wick.normal(mean, std)
    assert s.shape == (20000, 3)
    m = s.mean(0).tolist()
    sd = s.std(0).tolist()
    for got, want, w in zip(m, [0.0, 10.0, -5.0], [1.0, 0.5, 3.0]):
        assert abs(got - want) < 5 * w / np.sqrt(20000)
    for got, want in zip(sd, [1.0, 0.5, 3.0]):
        assert abs(got - want) < 0.05 * want
    t = wick.normal(2.0, 3.0, size=(50000,))
    assert abs(t.mean().item() - 2.0) < 0.05 and abs(t.std().item() - 3.0) < 0.05
    assert wick.normal(wick.zeros(4), 2.0).shape == (4,)
    assert wick.normal(1.0, wick.ones(2, 2)).shape == (2, 2)
    wick.manual_seed(4)
    a = wick.normal(0.0, 1.0, (5,)).tolist()
    wick.manual_seed(4)
    assert wick.normal(0.0, 1.0, (5,)).tolist() == a
    g1, g2 = wick.Generator().manual_seed(2), wick.Generator().manual_seed(2)
    assert wick.normal(wick.zeros(3), 1.0, generator=g1).tolist() == \
        wick.normal(wick.zeros(3), 1.0, generator=g2).tolist()
    # As PyTorch: differentiable in form, with zero gradients for mean and std.
    mu = wick.zeros(3, requires_grad=True)
    sigma = wick.ones(3, requires_grad=True)
    wick.normal(mu, sigma).sum().backward()
    assert mu.grad.tolist() == [0.0] * 3 and sigma.grad.tolist() == [0.0] * 3


# ---- bad inputs: PyTorch's exception types, messages naming the op and the values ----

BAD = [
    ("tril_1d", lambda: wick.tril(wick.ones(3)), IndexError, "tril", ["(3,)"]),
    ("einsum_too_few", lambda: wick.einsum("ij,jk", wick.ones(2, 3)), RuntimeError, "einsum",
     ["fewer operands", "2 subscript terms, 1 operands"]),
    ("einsum_too_many", lambda: wick.einsum("ij", wick.ones(2, 3), wick.ones(3)), RuntimeError,
     "einsum", ["more operands"]),
    ("einsum_sizes", lambda: wick.einsum("ij,jk", wick.ones(2, 3), wick.ones(4, 5)), RuntimeError,
     "einsum", ["subscript j has size 4", "size 3"]),
    ("einsum_dims", lambda: wick.einsum("ijk", wick.ones(2, 3)), RuntimeError, "einsum",
     ["(3)", "(2)"]),
    ("einsum_bad_char", lambda: wick.einsum("i1", wick.ones(2, 3)), RuntimeError, "einsum",
     ["index 1"]),
    ("einsum_output", lambda: wick.einsum("ij->k", wick.ones(2, 3)), RuntimeError, "einsum",
     ["subscript k"]),
    ("cross_size", lambda: wick.cross(wick.ones(3, 4), wick.ones(3, 4), dim=1), RuntimeError,
     "cross", ["dimension 1", "Got 4 and 4"]),
    ("bincount_negative", lambda: wick.bincount(wick.tensor([1, -2])), RuntimeError, "bincount",
     ["-2"]),
    ("bincount_float", lambda: wick.bincount(wick.tensor([1.0])), RuntimeError, "bincount",
     ["float32"]),
    ("multinomial_negative", lambda: wick.multinomial(wick.tensor([-1.0, 2.0]), 1), RuntimeError,
     "multinomial", ["-1"]),
    ("multinomial_too_many", lambda: wick.multinomial(wick.tensor([1.0, 2.0]), 3), RuntimeError,
     "multinomial", ["3 samples from 2"]),
    ("multinomial_zero_sum", lambda: wick.multinomial(wick.zeros(3), 1, True), RuntimeError,
     "multinomial", ["sum of probabilities"]),
    ("searchsorted_leading", lambda: wick.searchsorted(wick.ones(2, 3), wick.ones(3, 1)),
     RuntimeError, "searchsorted", ["(2, 3)", "(3, 1)"]),
    ("diagonal_same_dims", lambda: wick.ones(3, 3).diagonal(0, 1, 1), RuntimeError, "diagonal",
     ["1, 1"]),
    ("roll_align", lambda: wick.roll(wick.ones(3), (1, 2), 0), RuntimeError, "roll",
     ["shifts: 2, dims: 1"]),
    ("take_range", lambda: wick.take(wick.ones(3), wick.tensor([5])), IndexError, "take",
     ["index 5", "3 elements"]),
    ("scatter_range", lambda: wick.zeros(3).scatter(0, wick.tensor([5]), 1.0), RuntimeError,
     "scatter", ["index 5", "size 3"]),
    ("dot_sizes", lambda: wick.dot(wick.ones(3), wick.ones(4)), RuntimeError, "dot", ["3", "4"]),
    ("dot_2d", lambda: wick.dot(wick.ones(3, 1), wick.ones(3)), RuntimeError, "dot", ["2D"]),
    ("trace_1d", lambda: wick.trace(wick.ones(3)), RuntimeError, "trace", ["dim 1"]),
    ("normal_std", lambda: wick.normal(wick.zeros(2), wick.tensor([-1.0, 1.0])), RuntimeError,
     "normal", ["-1"]),
    ("unflatten_sizes", lambda: wick.ones(5).unflatten(0, (2, 2)), RuntimeError, "unflatten",
     ["(2, 2)", "(5)"]),
    ("repeat_interleave_size", lambda: wick.ones(2).repeat_interleave(wick.tensor([1, 2, 3])),
     RuntimeError, "repeat_interleave", ["= 3", "= 2"]),
    ("histc_bins", lambda: wick.histc(wick.ones(3), bins=0), RuntimeError, "histc", ["0"]),
    ("tensordot_sizes", lambda: wick.tensordot(wick.ones(2, 3), wick.ones(4, 5), dims=1),
     RuntimeError, "tensordot", ["size 3", "size 4"]),
    ("addmm_shapes", lambda: wick.addmm(wick.ones(2, 2), wick.ones(2, 3), wick.ones(2, 2)),
     RuntimeError, "addmm", ["2x3", "2x2"]),
    ("isclose_dtype", lambda: wick.isclose(wick.ones(2), wick.ones(2, dtype=wick.float64)),
     RuntimeError, "isclose", ["float32", "float64"]),
    ("cdist_columns", lambda: wick.cdist(wick.ones(2, 3), wick.ones(2, 4)), RuntimeError, "cdist",
     ["X1: 3 X2: 4"]),
]


@pytest.mark.parametrize("case", BAD, ids=[b[0] for b in BAD])
def test_bad_inputs(case):
    _, call, exc, name, values = case
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    assert name in message, message
    for v in values:
        assert v in message, (v, message)


# ---- other devices: compositions run wherever their parts run (here the sim device) ----

SIM_CASES = {
    "einsum": lambda a, b: wick.einsum("ij,jk->ik", a, b),
    "tril": lambda a, b: a.tril(-1),
    "flip_roll": lambda a, b: a.flip(0).roll(1, 1),
    "diagonal_trace": lambda a, b: a.diagonal(1) + a[:, :3].trace(),
    "cdist": lambda a, b: wick.cdist(a, b.t()),
    "kron_tile": lambda a, b: wick.kron(a[:2, :2], b[:2, :2]).tile(2),
    "scatter": lambda a, b: a.scatter(1, wick.tensor([[0], [1], [2]], device=a.device), b[:3, :1]),
    "take": lambda a, b: a.take(wick.tensor([0, 3, -1], device=a.device)),
}


@pytest.mark.parametrize("name", list(SIM_CASES))
def test_composites_on_the_sim_device(name):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal((4, 5))]
    results = []
    for device in ["cpu", "sim"]:
        a = wick.tensor(arrays[0], device=device).requires_grad_(True)
        b = wick.tensor(arrays[1], device=device).requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the CPU fallback's one-time warning
            out = SIM_CASES[name](a, b)
            out.sum().backward()
        assert out.device.type == device
        results.append([t.detach().cpu().numpy() for t in (out, a.grad, b.grad) if t is not None])
    for cpu, sim in zip(*results):
        np.testing.assert_allclose(sim, cpu, atol=1e-12)


def test_einsum_sublist_form():
    check(lambda m, a, b: m.einsum(a, [0, 1], b, [1, 2], [0, 2]), [(2, 3), (3, 4)])
    check(lambda m, a, b: m.einsum(a, [Ellipsis, 0, 1], b, [1, 2]), [(2, 2, 3), (3, 4)])
    with pytest.raises(RuntimeError, match="einsum"):
        wick.einsum(wick.ones(2), [60])


def test_inplace_tril_triu_lerp():
    for name, args in [("tril_", (0,)), ("triu_", (1,)), ("lerp_", (None, 0.25))]:
        results = []
        for m in (wick, torch):
            x = m.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4))
            call_args = [m.ones(3, 4) if a is None else a for a in args]
            out = getattr(x, name)(*call_args)
            assert out is x
            results.append(x.tolist())
        assert results[0] == results[1], name
    a = wick.ones(3, 3, requires_grad=True)
    y = a * 3
    y.tril_()
    y.sum().backward()
    assert a.grad.tolist() == torch.ones(3, 3).mul(3).tril().tolist()
