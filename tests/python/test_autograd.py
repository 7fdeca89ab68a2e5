"""Autograd from Python: backward with gradients and retain_graph, autograd.grad, grad modes,
hooks, retain_grad, detach, gradcheck."""

import pytest

import wick
from reference import check, needs_torch


def test_backward_and_leaves():
    x = wick.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    assert not y.is_leaf and x.is_leaf and y.grad_fn.name() == "SumBackward"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward"
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    (x * 2).backward(wick.ones(3))  # gradients accumulate
    assert x.grad.tolist() == [4.0, 6.0, 8.0]
    x.grad = None
    assert x.grad is None


def test_retain_graph():
    x = wick.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 3).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()


def test_autograd_grad():
    x = wick.tensor([1.0, 2.0], requires_grad=True)
    z = wick.tensor([3.0], requires_grad=True)
    y = (x * x).sum()
    (gx,) = wick.autograd.grad(y, [x])
    assert gx.tolist() == [2.0, 4.0] and x.grad is None
    out = wick.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert out[1] is None
    with pytest.raises(ValueError, match="allow_unused"):
        wick.autograd.grad((x * 2).sum(), [z])
    a, b = wick.randn(3, requires_grad=True), wick.randn(3, requires_grad=True)
    wick.autograd.backward([a.sum(), (b * 2).sum()])
    assert b.grad.tolist() == [2.0, 2.0, 2.0]


def test_no_grad_context_and_decorator():
    x = wick.ones(2, requires_grad=True)
    with wick.no_grad():
        assert not (x * 2).requires_grad
        with wick.enable_grad():
            assert (x * 2).requires_grad
    assert wick.is_grad_enabled()

    @wick.no_grad()
    def f(t):
        return t * 2

    @wick.no_grad
    def g(t):
        return t * 3

    assert not f(x).requires_grad and not g(x).requires_grad and wick.is_grad_enabled()
    wick.set_grad_enabled(False)
    assert not wick.is_grad_enabled()
    wick.set_grad_enabled(True)
    with wick.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    with wick.inference_mode():
        assert not (x * 2).requires_grad


def test_requires_grad_detach():
    x = wick.ones(2)
    x.requires_grad = True
    assert x.requires_grad
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.data_ptr() == y.data_ptr()
    with pytest.raises(RuntimeError):
        y.requires_grad_(False)  # not a leaf
    assert x.requires_grad_(False) is x and not x.requires_grad
    with pytest.raises(TypeError):
        wick.tensor([1, 2]).requires_grad_()


def test_hooks_and_retain_grad():
    x = wick.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()))
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: g * 2)  # replaces the gradient flowing on
    y.sum().backward()
    assert seen == [[6.0, 6.0]] and x.grad.tolist() == [6.0, 6.0]
    assert y.grad.tolist() == [1.0, 1.0]
    h.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert seen == [[6.0, 6.0]]  # removed
    with pytest.raises(RuntimeError):
        wick.zeros(1).register_hook(lambda g: g)


def test_hook_exception_propagates():
    x = wick.ones(2, requires_grad=True)

    def bad(g):
        raise KeyError("from hook")

    x.register_hook(bad)
    with pytest.raises(KeyError):
        (x * 2).sum().backward()


def test_gradcheck():
    x = wick.randn(3, 4, dtype=wick.float64, requires_grad=True)
    w = wick.randn(4, 2, dtype=wick.float64, requires_grad=True)
    assert wick.autograd.gradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    assert wick.autograd.gradcheck(lambda a: (a.sin(), a.sum(1)), (x,))
    assert wick.autograd.gradcheck(lambda a: a[a > 0] * 2, (x,))

    def wrong(a):  # forward a^2, but the gradient of a detached copy is missing
        return a * a.detach()

    assert not wick.autograd.gradcheck(wrong, (x,), raise_exception=False)
    with pytest.raises(wick.autograd.GradcheckError):
        wick.autograd.gradcheck(wrong, (x,))


def test_inplace_on_saved_tensor_is_an_error():
    x = wick.ones(3, requires_grad=True)
    y = x * 2
    z = y.sin()  # saves its input, y
    y += 1
    with pytest.raises(RuntimeError, match="in-place|version|modified"):
        z.sum().backward()


@needs_torch
def test_chain_matches_torch():
    check(lambda m, a, b: ((a @ b).relu() * a.sum(1, keepdim=True)).softmax(1).log().mean(0),
          [(4, 5), (5, 3)])


@needs_torch
@pytest.mark.parametrize("batched", [False, True], ids=["matmul", "bmm"])
def test_products_of_transposed_views_match_torch(batched):
    # A column-major operand (weight.t(), a.transpose) takes its gradient in its own layout:
    # Note [gradients in their input's layout]. Both operands, one at a time and together.
    def t(x):
        return x.transpose(-1, -2)

    lead = (2,) if batched else ()
    check(lambda m, a, w: a @ t(w), [(*lead, 4, 6), (*lead, 5, 6)])
    check(lambda m, a, w: t(a) @ w, [(*lead, 6, 4), (*lead, 6, 5)])
    check(lambda m, a, w: (t(a) @ t(w)).tanh(), [(*lead, 6, 4), (*lead, 5, 6)])
    x = wick.randn(*lead, 6, 4, dtype=wick.float64, requires_grad=True)
    w = wick.randn(*lead, 5, 6, dtype=wick.float64, requires_grad=True)
    assert wick.autograd.gradcheck(lambda a, b: t(a) @ t(b), (x, w))


def test_hook_returning_a_wrong_shape_is_an_error():
    x = wick.ones(3, requires_grad=True)
    x.register_hook(lambda g: wick.ones(7))
    with pytest.raises(ValueError, match="hook returned a gradient of shape"):
        (x * 2).sum().backward()


def test_concurrent_backward_into_one_leaf_loses_no_update():
    # backward() releases the GIL, so the threads accumulate into x.grad at the same time; the
    # leaf's lock (autograd/meta.h) must serialize them: exactly 4 * 300 contributions.
    import threading

    x = wick.zeros(3, requires_grad=True)
    errors = []

    def work():
        try:
            for _ in range(300):
                (x * 1.0).sum().backward()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert x.grad.tolist() == [1200.0] * 3


def test_deep_graph_backward_and_free_without_recursion():
    # Note [iterative teardown]: recursive destructors would overflow the stack on this chain.
    x = wick.ones(1, requires_grad=True)
    y = x
    for _ in range(10**6):
        y = y + 1
    y.backward()
    assert x.grad.item() == 1.0
    del y
    z = x
    for _ in range(10**6):
        z = z * 1.0
    del z  # freed without backward: saved tensors and all


def test_data_of_another_shape_after_forward_raises():
    w = wick.ones(3, requires_grad=True)
    loss = (w * 2).sum()
    w.data = wick.ones(5)
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \(3,\) but "
                                           r"expected shape compatible with \(5,\)"):
        loss.backward()
    assert w.grad is None
