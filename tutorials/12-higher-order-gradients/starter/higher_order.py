"""Lab 12: higher-order gradients - differentiating a gradient.

With create_graph=True, wick's backward formulas run with grad mode on, so the gradient they
return is itself on the tape and can be differentiated again (Note [higher-order gradients] in
autograd/engine.cpp). You use that for a Hessian-vector product from two reverse passes, check
it against finite differences of gradients, write WGAN-GP's gradient penalty, take Newton steps
solved by conjugate gradient from HVPs alone, and differentiate through an SGD step (MAML).

Every function here takes plain wick tensors and returns tensors without a graph unless its
docstring says otherwise: the caller's tensors are constants, as in wick.func."""

import math

import wick


def gradient(f, x):
    """df/dx at x for a scalar function f, without a graph (given: one reverse pass)."""
    x = x.detach().requires_grad_(True)
    with wick.enable_grad():
        (g,) = wick.autograd.grad(f(x), x)
    return g


def hvp(f, x, v):
    """H v, H the Hessian of the scalar function f at x (x and v of one shape), without forming
    H: one reverse pass that keeps the gradient's graph, and a second one through it. The result
    has no graph."""
    # TODO(12): hvp: g = grad(f(x), x, create_graph=True); H v is the gradient of (g * v).sum()
    raise NotImplementedError("hvp: g = grad(f(x), x, create_graph=True); H v is the gradient of (g * v).sum()")


def hvp_finite_difference(f, x, v, eps):
    """H v by a central difference of gradients along v: first-order autodiff only, as when a
    framework has no second derivative of some op. Its error is O(eps^2) from truncation plus
    O(unit roundoff / eps) from cancellation."""
    # TODO(12): hvp_finite_difference: (gradient at x + eps v - gradient at x - eps v) / (2 eps)
    raise NotImplementedError("hvp_finite_difference: (gradient at x + eps v - gradient at x - eps v) / (2 eps)")


def gradient_penalty(critic, real, fake, alpha):
    """WGAN-GP's penalty, the batch mean of (|grad_x D(x_hat)|_2 - 1)^2, at the interpolates
    x_hat = alpha real + (1 - alpha) fake (alpha: one number per example, shape (batch,)). The
    norm is per example, over all its other dimensions. The result keeps its graph: the critic's
    optimizer differentiates it with respect to the critic's parameters."""
    # TODO(12): gradient_penalty: x_hat is a new leaf; its gradient needs create_graph=True; norm per example
    raise NotImplementedError("gradient_penalty: x_hat is a new leaf; its gradient needs create_graph=True; norm per example")


def conjugate_gradient(hvp_fn, b, max_iters, rtol=1e-10):
    """Solves H p = b for a symmetric positive definite H known only through hvp_fn(d) = H d,
    by conjugate gradients from p = 0. Stops when |b - H p| <= rtol |b| or after max_iters
    products. Returns (p, the number of hvp_fn calls)."""
    # TODO(12): conjugate_gradient: residual r = b, direction d = r; step r.r / d.Hd; next d = r' + (r'.r'/r.r) d
    raise NotImplementedError("conjugate_gradient: residual r = b, direction d = r; step r.r / d.Hd; next d = r' + (r'.r'/r.r) d")


def newton_cg(loss_fn, w, tol, max_steps=20, cg_iters=100):
    """Minimises the scalar loss_fn from w by Newton's method, w <- w + p with H p = -g, each
    system solved by conjugate_gradient with hvp (H is never formed). Stops when |g| <= tol or
    after max_steps. Returns (w, Newton steps taken, HVPs used in all)."""
    # TODO(12): newton_cg: loop: g = gradient(loss_fn, w); stop if small; p from CG on -g with hvp
    raise NotImplementedError("newton_cg: loop: g = gradient(loss_fn, w); stop if small; p from CG on -g with hvp")


def gradient_descent(loss_fn, w, lr, tol, max_steps=100000):
    """Minimises loss_fn by w <- w - lr g until |g| <= tol (given: the baseline). Returns (w,
    steps taken)."""
    steps = 0
    while steps < max_steps:
        g = gradient(loss_fn, w)
        if g.norm().item() <= tol:
            break
        w, steps = w - lr * g, steps + 1
    return w, steps


def maml_meta_gradient(loss_fn, w, support, query, inner_lr, first_order=False):
    """MAML's meta-gradient with one inner SGD step: the derivative with respect to w of
    loss_fn(w - inner_lr * grad loss_fn(w, support), query), where loss_fn(w, batch) is a scalar.
    Exactly, (I - inner_lr H_support) grad loss_fn(w', query) at the adapted w'. With
    first_order=True the inner gradient is a constant (first-order MAML), which drops the
    Hessian term. The result has no graph."""
    # TODO(12): maml_meta_gradient: inner gradient with create_graph=not first_order; then grad of the query loss
    raise NotImplementedError("maml_meta_gradient: inner gradient with create_graph=not first_order; then grad of the query loss")
