"""Lab 02: reverse-mode automatic differentiation in ~150 lines, over wick tensors.

A Var holds a value (a wick.Tensor, float64, no autograd of its own) and, if an op made it, the
op that did and its inputs: the graph is recorded as the program runs (define-by-run, as in
PyTorch and in TF2's GradientTape; TF1 and Theano built it first and ran it later). backward()
walks the graph from the output with the dependency-counting order wick's engine uses
(autograd/engine.cpp, Note [engine order]): a node runs only when every node that consumes it
has sent its gradient, so each node's backward runs exactly once, with its gradient complete."""

import wick


class Var:
    def __init__(self, value, op=None, inputs=()):
        self.value = value
        self.op = op          # the Op that made this Var, or None for a leaf
        self.inputs = inputs  # the Vars the op read
        self.grad = None      # d(output)/d(self) after backward(), for leaves and inner nodes

    @property
    def shape(self):
        return tuple(self.value.shape)

    def __add__(self, other):
        return Add.apply(self, other)

    def __mul__(self, other):
        return Mul.apply(self, other)

    def __matmul__(self, other):
        return MatMul.apply(self, other)

    def tanh(self):
        return Tanh.apply(self)

    def exp(self):
        return Exp.apply(self)

    def sum(self):
        return Sum.apply(self)


class Op:
    """forward(*values) -> value; backward(grad) -> one gradient per input (saved values in self)."""

    @classmethod
    def apply(cls, *inputs):
        op = cls()
        return Var(op.forward(*[v.value for v in inputs]), op, inputs)


def sum_to_shape(grad, shape):
    """Undoes broadcasting: sums grad over the dims that broadcasting added or expanded from 1."""
    # TODO(02): sum_to_shape: sum away leading extra dims, then keepdim-sum dims where shape has 1
    raise NotImplementedError("sum_to_shape: sum away leading extra dims, then keepdim-sum dims where shape has 1")


class Add(Op):
    def forward(self, a, b):
        self.shapes = (tuple(a.shape), tuple(b.shape))
        return a + b

    def backward(self, grad):
        # TODO(02): backward: the gradient flows to both inputs, summed back to each input's shape
        raise NotImplementedError("backward: the gradient flows to both inputs, summed back to each input's shape")


class Mul(Op):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, grad):
        # TODO(02): backward: d(ab)/da = b, d(ab)/db = a; mind broadcasting
        raise NotImplementedError("backward: d(ab)/da = b, d(ab)/db = a; mind broadcasting")


class MatMul(Op):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a @ b

    def backward(self, grad):
        # TODO(02): backward: dA = grad @ B^T, dB = A^T @ grad
        raise NotImplementedError("backward: dA = grad @ B^T, dB = A^T @ grad")


class Tanh(Op):
    def forward(self, a):
        self.out = a.tanh()
        return self.out

    def backward(self, grad):
        # TODO(02): backward: d tanh(x) = 1 - tanh(x)^2, from the saved output
        raise NotImplementedError("backward: d tanh(x) = 1 - tanh(x)^2, from the saved output")


class Exp(Op):
    def forward(self, a):
        self.out = a.exp()
        return self.out

    def backward(self, grad):
        # TODO(02): backward: d exp(x) = exp(x): reuse the saved output
        raise NotImplementedError("backward: d exp(x) = exp(x): reuse the saved output")


class Sum(Op):
    def forward(self, a):
        self.shape = tuple(a.shape)
        return a.sum()

    def backward(self, grad):
        # TODO(02): backward: every element gets the (scalar) gradient: expand it to the input shape
        raise NotImplementedError("backward: every element gets the (scalar) gradient: expand it to the input shape")


def backward(root):
    """Fills .grad of every Var that root depends on, with d(root)/d(var); root must be a scalar.
    Returns the Vars whose op ran, in the order they ran (the engine's order)."""
    # TODO(02): backward: count consumers per node (DFS), then run ready nodes; accumulate grads
    raise NotImplementedError("backward: count consumers per node (DFS), then run ready nodes; accumulate grads")


def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """Compares backward() with central differences (f(x + eps) - f(x - eps)) / (2 eps) for every
    element of every input (float64 Vars); f returns a scalar Var. Returns True or raises
    AssertionError naming the input and element that disagree (PyTorch's gradcheck rule:
    |analytic - numeric| <= atol + rtol * |numeric|)."""
    # TODO(02): gradcheck: analytic grads from backward(f(*inputs)); numeric by perturbing each element
    raise NotImplementedError("gradcheck: analytic grads from backward(f(*inputs)); numeric by perturbing each element")
