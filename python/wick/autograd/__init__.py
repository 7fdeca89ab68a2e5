"""wick.autograd: gradients of tensors (torch.autograd).

backward() and grad() run the C++ engine (autograd/engine.h); with create_graph=True the
gradients carry a graph of their own and can be differentiated again. gradcheck compares autograd
with central finite differences in float64, gradgradcheck does the same for the gradient
(autograd/gradcheck.h).
"""

from wick import _C
from wick.autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401

__all__ = ["backward", "grad", "gradcheck", "gradgradcheck", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "GradcheckError"]

GradcheckError = _C.GradcheckError


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates d(sum of tensors[i] * grad_tensors[i]) / d(leaf) into every leaf's .grad.
    With create_graph=True the .grad tensors have a graph of their own (retain_graph defaults
    to create_graph, as in PyTorch)."""
    if inputs is not None:
        raise ValueError("backward: inputs= is not supported; use wick.autograd.grad")
    _C._backward(tensors, grad_tensors, retain_graph, bool(create_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False):
    """Returns the gradients of outputs with respect to inputs as a tuple (None where unused);
    with create_graph=True they can be differentiated again."""
    return _C._grad(outputs, inputs, grad_outputs, retain_graph, allow_unused, bool(create_graph))


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


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, **kwargs):
    """Checks func's second derivatives: gradcheck of (inputs, grad_outputs) -> the gradients
    autograd.grad returns with create_graph=True. grad_outputs defaults to fixed pseudo-random
    float64 values. Returns True, or raises GradcheckError (False if not raise_exception)."""
    if isinstance(inputs, _C.Tensor):
        inputs = (inputs,)
    if isinstance(grad_outputs, (tuple, list)):
        if len(grad_outputs) != 1:
            raise ValueError("gradgradcheck: pass one grad_output (several outputs are checked "
                             f"as one flattened output); got {len(grad_outputs)}")
        grad_outputs = grad_outputs[0]
    try:
        return _C._gradgradcheck(func, tuple(inputs), grad_outputs, eps, atol, rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
