"""Higher-order gradients (create_graph=True): the gradient keeps a graph of its own, so it can be
differentiated again. Checked against PyTorch on the same values: second derivatives, a
gradient penalty through a CNN (convolution, batch norm, pooling), a Hessian-vector product,
and the bad inputs. (Every op of the table is gradgradchecked in test_op_table.py.)"""

import numpy as np
import pytest

import wick
from reference import needs_torch, torch


def pair(array, requires_grad=True):
    return (wick.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


@needs_torch
def test_second_and_third_derivatives_of_a_scalar_function():
    values = np.array([0.3, -1.2, 2.0])
    results = []
    for m, x in zip((wick, torch), pair(values)):
        y = (x ** 3 * m.sin(x)).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = m.autograd.grad(gg.sum(), x)
        results.append([t.detach().numpy() for t in (g, gg, ggg)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@needs_torch
def test_backward_with_create_graph_leaves_a_differentiable_grad():
    values = np.array([[0.5, -0.25], [1.5, 2.0]])
    results = []
    for m, x in zip((wick, torch), pair(values)):
        with pytest.warns(UserWarning, match="reference cycle"):  # PyTorch warns the same
            (m.tanh(x) * x).sum().backward(create_graph=True)
        assert x.grad.requires_grad and x.grad.grad_fn is not None
        first = x.grad.detach().numpy().copy()
        g = x.grad
        x.grad = None
        (g * g).sum().backward()
        results.append((first, x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10)


def make_critic(m, seed):
    """A small CNN critic with every layer kind that has a backward kernel of its own."""
    nn = m.nn
    m.manual_seed(seed)
    net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.GELU(),
                        nn.MaxPool2d(2), nn.Conv2d(4, 3, 3), nn.SiLU(), nn.AdaptiveAvgPool2d(1),
                        nn.Flatten(), nn.Linear(3, 1))
    return net.double()


@needs_torch
def test_gradient_penalty_through_a_cnn_matches_pytorch():
    # WGAN-GP's penalty, (|d critic / d x| - 1)^2: its gradient with respect to the critic's
    # parameters runs backward through the backward of every layer.
    wnet, tnet = make_critic(wick, 0), make_critic(torch, 0)
    with torch.no_grad():
        for wp, tp in zip(wnet.parameters(), tnet.parameters()):
            tp.copy_(torch.tensor(wp.detach().numpy()))
    x = np.random.default_rng(1).standard_normal((3, 2, 6, 6))
    grads = []
    for m, net in ((wick, wnet), (torch, tnet)):
        inputs = m.tensor(x, requires_grad=True)
        (g,) = m.autograd.grad(net(inputs).sum(), inputs, create_graph=True)
        penalty = ((g.reshape(3, -1).norm(dim=1) - 1) ** 2).mean()
        penalty.backward()
        grads.append([None if p.grad is None else p.grad.numpy() for p in net.parameters()])
    for a, b in zip(*grads):  # the last bias does not reach the input gradient: None in both
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


@needs_torch
def test_hessian_vector_product_matches_pytorch():
    rng = np.random.default_rng(2)
    w_values, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    data = rng.standard_normal((5, 4))
    results = []
    for m in (wick, torch):
        w = m.tensor(w_values, requires_grad=True)
        loss = m.nn.functional.log_softmax(m.tensor(data) @ w, dim=1)[:, 0].sum()
        (g,) = m.autograd.grad(loss, w, create_graph=True)
        (hv,) = m.autograd.grad((g * m.tensor(v)).sum(), w)
        results.append(hv.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)


@needs_torch
def test_bce_with_logits_derivatives_at_and_around_zero_match_pytorch():
    # At a logit of exactly 0 (logistic regression started from w = 0) the loss has no kink: the
    # first derivative is sigmoid(0) - y and the second sigmoid'(0) = 1/4.
    logits, target = np.array([0.0, 0.0, -3.0, 2.5]), np.array([1.0, 0.0, 1.0, 0.3])
    results = []
    for m, z in zip((wick, torch), pair(logits)):
        loss = m.nn.functional.binary_cross_entropy_with_logits(z, m.tensor(target))
        (g,) = m.autograd.grad(loss, z, create_graph=True)
        (h,) = m.autograd.grad(g.sum(), z)
        results.append((g.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


def test_without_create_graph_the_gradient_has_no_graph():
    x = wick.tensor([1.0, 2.0], requires_grad=True)
    (g,) = wick.autograd.grad((x ** 2).sum(), x)
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        wick.autograd.grad(g.sum(), x)


def test_create_graph_retains_the_graph_by_default():
    x = wick.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    wick.autograd.grad(y, x, create_graph=True)
    (again,) = wick.autograd.grad(y, x)  # the first call kept the saved tensors
    np.testing.assert_allclose(again.numpy(), [3.0, 12.0])


def square_with_a_cut_graph(x):
    # x^2 as 2 x c - c^2 with c = x.detach(): the right value and the right first derivative
    # (2c), but that derivative has no graph back to x, so the second derivative reads 0, not 2.
    c = x.detach()
    return x * c * 2 - c * c


def test_gradgradcheck_catches_a_wrong_second_derivative():
    x = wick.tensor([0.5, -1.5], dtype=wick.float64, requires_grad=True)
    assert wick.autograd.gradcheck(square_with_a_cut_graph, (x,))
    with pytest.raises(wick.autograd.GradcheckError, match="Jacobian mismatch"):
        wick.autograd.gradgradcheck(square_with_a_cut_graph, (x,))
    assert not wick.autograd.gradgradcheck(square_with_a_cut_graph, (x,), raise_exception=False)
    assert wick.autograd.gradgradcheck(lambda t: t * t, (x,))


def test_gradgradcheck_rejects_bad_inputs():
    x32 = wick.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="float64"):
        wick.autograd.gradgradcheck(lambda t: t * t, (x32,))
    x = wick.tensor([1.0, 2.0], dtype=wick.float64, requires_grad=True)
    with pytest.raises(ValueError, match="one grad_output"):
        wick.autograd.gradgradcheck(lambda t: t * t, (x,), grad_outputs=[x, x])
    with pytest.raises(TypeError, match="float64"):
        wick.autograd.gradgradcheck(lambda t: t * t, (x,),
                                    grad_outputs=wick.ones(2, dtype=wick.float32))
