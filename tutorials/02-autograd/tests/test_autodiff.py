"""Lab 02's graded tests: each backward formula against wick's own autograd, the engine's order
on a graph with shared nodes, and gradcheck (which must also catch a wrong formula)."""

import pytest
import wick
from labkit import impl

A = impl(__file__, "autodiff")


def rand(*shape):
    return wick.randn(*shape, dtype=wick.float64)


def reference_grads(f, values):
    """The same function on wick's autograd: the gradients PyTorch's design gives."""
    leaves = [v.clone().requires_grad_(True) for v in values]
    f(*leaves).backward()
    return [leaf.grad for leaf in leaves]


def mine(f, values):
    vs = [A.Var(v) for v in values]
    A.backward(f(*vs))
    return [v.grad for v in vs]


def check(f, *shapes):
    wick.manual_seed(0)
    values = [rand(*s) for s in shapes]
    for got, want in zip(mine(f, values), reference_grads(f, values)):
        assert tuple(got.shape) == tuple(want.shape)
        assert wick.allclose(got, want, rtol=1e-9, atol=1e-12)


def test_add_with_broadcasting():
    check(lambda a, b: (a + b).sum(), (3, 4), (4,))
    check(lambda a, b: (a + b).sum(), (3, 1), (2, 3, 4))


def test_mul():
    check(lambda a, b: (a * b).sum(), (3, 4), (3, 4))
    check(lambda a, b: (a * b).sum(), (3, 4), (1, 4))


def test_matmul():
    check(lambda a, b: (a @ b).sum(), (3, 5), (5, 2))


def test_tanh_and_exp():
    check(lambda a: a.tanh().sum(), (4, 3))
    check(lambda a: a.exp().sum(), (4, 3))


def test_engine_order_shared_nodes():
    # h is used twice: its gradient must be complete (both uses summed) before its backward runs.
    def f(x, w):
        h = (x @ w).tanh()
        return (h * h + h.exp()).sum()
    check(f, (2, 3), (3, 3))
    x, w = A.Var(rand(2, 3)), A.Var(rand(3, 3))
    out = f(x, w)
    order = A.backward(out)
    assert len(order) == len({id(v) for v in order}) == 6  # every op node once
    position = {id(v): i for i, v in enumerate(order)}
    for v in order:  # a node runs after every node that consumes it
        for inp in v.inputs:
            if inp.op is not None:
                assert position[id(inp)] > position[id(v)]


def test_mlp_layer_matches_wick():
    check(lambda x, w, b: ((x @ w + b).tanh() * (x @ w)).sum(), (4, 3), (3, 5), (5,))


def test_gradcheck_accepts_correct_formulas():
    assert A.gradcheck(lambda a, b: ((a @ b).tanh() + a.exp() @ b).sum(), [A.Var(rand(2, 3)), A.Var(rand(3, 2))])


def test_gradcheck_catches_a_wrong_formula():
    class WrongMul(A.Mul):
        def backward(self, grad):
            return grad * self.a, grad * self.b  # swapped: the classic mistake

    with pytest.raises(AssertionError):
        A.gradcheck(lambda a, b: WrongMul.apply(a, b).sum(), [A.Var(rand(3)), A.Var(rand(3))])
