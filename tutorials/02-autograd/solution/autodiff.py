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
    # BEGIN SOLUTION: sum away leading extra dims, then keepdim-sum dims where shape has 1
    while grad.dim() > len(shape):
        grad = grad.sum(0)
    for d, size in enumerate(shape):
        if size == 1 and grad.shape[d] != 1:
            grad = grad.sum(d, keepdim=True)
    return grad
    # END SOLUTION


class Add(Op):
    def forward(self, a, b):
        self.shapes = (tuple(a.shape), tuple(b.shape))
        return a + b

    def backward(self, grad):
        # BEGIN SOLUTION: the gradient flows to both inputs, summed back to each input's shape
        return sum_to_shape(grad, self.shapes[0]), sum_to_shape(grad, self.shapes[1])
        # END SOLUTION


class Mul(Op):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, grad):
        # BEGIN SOLUTION: d(ab)/da = b, d(ab)/db = a; mind broadcasting
        return sum_to_shape(grad * self.b, tuple(self.a.shape)), sum_to_shape(
            grad * self.a, tuple(self.b.shape))
        # END SOLUTION


class MatMul(Op):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a @ b

    def backward(self, grad):
        # BEGIN SOLUTION: dA = grad @ B^T, dB = A^T @ grad
        return grad @ self.b.t(), self.a.t() @ grad
        # END SOLUTION


class Tanh(Op):
    def forward(self, a):
        self.out = a.tanh()
        return self.out

    def backward(self, grad):
        # BEGIN SOLUTION: d tanh(x) = 1 - tanh(x)^2, from the saved output
        return (grad * (1 - self.out * self.out),)
        # END SOLUTION


class Exp(Op):
    def forward(self, a):
        self.out = a.exp()
        return self.out

    def backward(self, grad):
        # BEGIN SOLUTION: d exp(x) = exp(x): reuse the saved output
        return (grad * self.out,)
        # END SOLUTION


class Sum(Op):
    def forward(self, a):
        self.shape = tuple(a.shape)
        return a.sum()

    def backward(self, grad):
        # BEGIN SOLUTION: every element gets the (scalar) gradient: expand it to the input shape
        return (grad.expand(*self.shape).contiguous(),)
        # END SOLUTION


def backward(root):
    """Fills .grad of every Var that root depends on, with d(root)/d(var); root must be a scalar.
    Returns the Vars whose op ran, in the order they ran (the engine's order)."""
    # BEGIN SOLUTION: count consumers per node (DFS), then run ready nodes; accumulate grads
    dependencies = {}  # id(var) -> how many ops read it (within the graph)
    seen, stack = {id(root)}, [root]
    while stack:
        var = stack.pop()
        for inp in var.inputs:
            dependencies[id(inp)] = dependencies.get(id(inp), 0) + 1
            if id(inp) not in seen:
                seen.add(id(inp))
                stack.append(inp)
    root.grad = wick.ones_like(root.value)
    ready, order = [root], []
    while ready:
        var = ready.pop()
        if var.op is None:
            continue
        order.append(var)
        for inp, g in zip(var.inputs, var.op.backward(var.grad)):
            inp.grad = g if inp.grad is None else inp.grad + g
            dependencies[id(inp)] -= 1
            if dependencies[id(inp)] == 0:
                ready.append(inp)
    return order
    # END SOLUTION


def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """Compares backward() with central differences (f(x + eps) - f(x - eps)) / (2 eps) for every
    element of every input (float64 Vars); f returns a scalar Var. Returns True or raises
    AssertionError naming the input and element that disagree (PyTorch's gradcheck rule:
    |analytic - numeric| <= atol + rtol * |numeric|)."""
    # BEGIN SOLUTION: analytic grads from backward(f(*inputs)); numeric by perturbing each element
    for v in inputs:
        v.grad = None
    backward(f(*inputs))
    for n, v in enumerate(inputs):
        analytic = v.grad.flatten().tolist()
        flat = v.value.flatten().tolist()
        for i in range(len(flat)):
            values = []
            for delta in (eps, -eps):
                bumped = list(flat)
                bumped[i] += delta
                old = v.value
                v.value = wick.tensor(bumped, dtype=wick.float64).reshape(*old.shape)
                values.append(f(*inputs).value.item())
                v.value = old
            numeric = (values[0] - values[1]) / (2 * eps)
            if abs(analytic[i] - numeric) > atol + rtol * abs(numeric):
                raise AssertionError(
                    f"input {n}, element {i}: backward gives {analytic[i]:.6g}, "
                    f"finite differences {numeric:.6g}")
    return True
    # END SOLUTION
