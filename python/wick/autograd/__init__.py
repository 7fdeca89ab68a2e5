"""wick.autograd: gradients of tensors (torch.autograd).

backward() and grad() run the C++ engine (autograd/engine.h); gradcheck compares autograd with
central finite differences in float64 (autograd/gradcheck.h).
"""

from wick import _C
from wick.autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401

__all__ = ["backward", "grad", "gradcheck", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "GradcheckError"]

GradcheckError = _C.GradcheckError


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates d(sum of tensors[i] * grad_tensors[i]) / d(leaf) into every leaf's .grad."""
    if create_graph:
        raise ValueError("backward: create_graph=True (higher-order gradients) is not supported")
    if inputs is not None:
        raise ValueError("backward: inputs= is not supported; use wick.autograd.grad")
    _C._backward(tensors, grad_tensors, retain_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False):
    """Returns the gradients of outputs with respect to inputs as a tuple (None where unused)."""
    if create_graph:
        raise ValueError("grad: create_graph=True (higher-order gradients) is not supported")
    return _C._grad(outputs, inputs, grad_outputs, retain_graph, allow_unused)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kwargs):
    """Checks func's gradients against finite differences; inputs should be float64 and require
    grad. Returns True, or raises GradcheckError (or returns False if not raise_exception)."""
    if isinstance(inputs, _C.Tensor):
        inputs = (inputs,)
    try:
        return _C._gradcheck(func, tuple(inputs), eps, atol, rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
