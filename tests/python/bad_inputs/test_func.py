"""Bad inputs to the function transforms of wick.func: grad, grad_and_value, vjp, jvp, jacrev,
hessian and vmap - wrong argnums and in_dims, inputs that are not floating-point tensors,
functions that return the wrong thing, cotangents and tangents that do not match.

How the types were checked: each row was run against functorch 1.13 (torch.func's predecessor,
shipped with Debian's torch in /work/main/.venv). Where functorch raises RuntimeError for a
function's output of the wrong kind (a non-scalar for grad, an int for vjp, a missing aux) wick
raises RuntimeError too; vmap's in_dims mistakes are ValueError in both and a dim out of range an
IndexError. For a wrong argument type (argnums="0", a str tangent) and a bad argument value
(argnums out of range) functorch raises RuntimeError, and wick its documented rule (core/error.h):
TypeError and ValueError, as test_ops.py does for ops."""

import wick as W
from wick.func import grad, grad_and_value, hessian, jacrev, jvp, vjp, vmap

from bad_inputs.corpus import Bad, check, parametrize

X = W.ones(3)
I64 = W.ones(3, dtype=W.int64)


def _sum(x):
    return x.sum()


def _product(x, y):
    return (x * y).sum()


def _double(x):
    return x * 2


def _vjp_fn():
    return vjp(_double, X)[1]


GRAD = [
    Bad("grad-non-scalar", lambda: grad(_double)(X), RuntimeError, "grad_and_value",
        ["scalar", "(3,)"]),
    Bad("grad-returns-int", lambda: grad(lambda x: 3)(X), RuntimeError, "grad_and_value",
        ["int"]),
    Bad("grad-returns-none", lambda: grad(lambda x: None)(X), RuntimeError, "grad_and_value",
        ["NoneType"]),
    Bad("grad-int-input", lambda: grad(_sum)(I64), TypeError, "grad", ["int64"]),
    Bad("grad-list-input", lambda: grad(lambda x: x[0])([1.0, 2.0]), TypeError, "grad",
        ["list"]),
    Bad("grad-float-input", lambda: grad(_double)(3.0), TypeError, "grad", ["float"]),
    Bad("grad-argnums-out-of-range", lambda: grad(_product, argnums=2)(X, X), ValueError,
        "grad", ["argnums 2", "2 positional"]),
    Bad("grad-argnums-too-negative", lambda: grad(_product, argnums=-3)(X, X), ValueError,
        "grad", ["-3"]),
    # silent: the string was iterated into its characters ("argnums 0 is out of range").
    Bad("grad-argnums-str", lambda: grad(_sum, argnums="0")(X), TypeError, "grad", ["'0'"]),
    Bad("grad-argnums-float", lambda: grad(_sum, argnums=0.0)(X), TypeError, "grad", ["0.0"]),
    Bad("grad-argnums-list", lambda: grad(_product, argnums=[0, 1])(X, X), TypeError, "grad",
        ["[0, 1]"]),
    Bad("grad-argnums-empty", lambda: grad(_sum, argnums=())(X), ValueError, "grad",
        ["at least one"]),
    Bad("grad-no-arguments", lambda: grad(lambda: W.ones(1).sum())(), ValueError, "grad",
        ["0 positional"]),
    Bad("grad-has-aux-not-tuple", lambda: grad(_sum, has_aux=True)(X), RuntimeError,
        "grad_and_value", ["(output, aux)", "Tensor"]),
    Bad("grad-has-aux-three", lambda: grad(lambda x: (x.sum(), 1, 2), has_aux=True)(X),
        RuntimeError, "grad_and_value", ["length 3"]),
    Bad("grad-and-value-non-scalar", lambda: grad_and_value(lambda x: x)(X), RuntimeError,
        "grad_and_value", ["(3,)"]),
    Bad("grad-in-vmap-non-scalar", lambda: vmap(grad(_double))(W.ones(2, 3)), RuntimeError,
        "grad_and_value", ["scalar tensor per example"]),
]

VJP_JVP = [
    Bad("vjp-two-cotangents", lambda: _vjp_fn()(X, X), ValueError, "vjp_fn",
        ["1 cotangents", "got 2"]),
    Bad("vjp-cotangent-shape", lambda: _vjp_fn()(W.ones(4)), ValueError, "vjp_fn",
        ["(4,)", "(3,)"]),
    Bad("vjp-int-primal", lambda: vjp(_double, I64), TypeError, "vjp", ["int64"]),
    Bad("vjp-str-primal", lambda: vjp(_double, "x"), TypeError, "vjp", ["str"]),
    # silent: "'int' object is not iterable" and "too many values to unpack", naming nothing.
    Bad("vjp-returns-int", lambda: vjp(lambda x: 3, X), RuntimeError, "vjp", ["int"]),
    Bad("vjp-returns-list-with-none", lambda: vjp(lambda x: [x, None], X), RuntimeError, "vjp",
        ["list"]),
    Bad("vjp-has-aux-not-tuple", lambda: vjp(_double, X, has_aux=True), RuntimeError, "vjp",
        ["(output, aux)"]),
    Bad("jvp-tangent-count", lambda: jvp(_double, (X,), (X, X)), ValueError, "jvp",
        ["2 tangents", "1 primals"]),
    Bad("jvp-tangent-shape", lambda: jvp(_double, (X,), (W.ones(4),)), ValueError, "jvp",
        ["(4,)", "(3,)"]),
    # silent: a bare tensor was iterated into its elements, each passed as an argument.
    Bad("jvp-primals-bare-tensor", lambda: jvp(_double, X, X), TypeError, "jvp",
        ["primals", "Tensor"]),
    Bad("jvp-tangent-str", lambda: jvp(_double, (X,), ("a",)), TypeError, "jvp",
        ["tangents[0]", "str"]),
    Bad("jvp-int-primal", lambda: jvp(_double, (I64,), (I64,)), TypeError, "jvp", ["int64"]),
    Bad("jvp-returns-int", lambda: jvp(lambda x: 3, (X,), (X,)), RuntimeError, "jvp",
        ["one tensor"]),
    Bad("jacrev-int-input", lambda: jacrev(_double)(I64), TypeError, "jacrev", ["int64"]),
    Bad("jacrev-returns-int", lambda: jacrev(lambda x: 3)(X), RuntimeError, "jacrev",
        ["one tensor"]),
    Bad("jacrev-argnums-out-of-range", lambda: jacrev(lambda x: x, argnums=1)(X), ValueError,
        "jacrev", ["argnums 1"]),
    Bad("jacrev-str-input", lambda: jacrev(lambda x: x)("x"), TypeError, "jacrev", ["str"]),
    Bad("hessian-int-input", lambda: hessian(_sum)(I64), TypeError, "jacrev", ["int64"]),
    Bad("hessian-argnums-out-of-range", lambda: hessian(_sum, argnums=3)(X), ValueError,
        "jacrev", ["argnums 3"]),
]

VMAP = [
    Bad("vmap-in-dims-count", lambda: vmap(lambda a, b: a + b, in_dims=(0,))(X, X), ValueError,
        "vmap", ["1 entries", "2 arguments"]),
    Bad("vmap-in-dims-out-of-range", lambda: vmap(lambda a: a, in_dims=1)(X), ValueError, "vmap",
        ["in_dims=1", "(3,)"]),
    Bad("vmap-in-dims-5", lambda: vmap(lambda a: a, in_dims=5)(W.ones(2, 3)), ValueError, "vmap",
        ["in_dims=5", "(2, 3)"]),
    Bad("vmap-in-dims-str", lambda: vmap(lambda a: a, in_dims="0")(X), ValueError, "vmap",
        ["'0'"]),
    Bad("vmap-sizes-differ", lambda: vmap(lambda a, b: a + b)(W.ones(2), W.ones(3)), ValueError,
        "vmap", ["[2, 3]"]),
    Bad("vmap-nothing-mapped", lambda: vmap(lambda a: a, in_dims=None)(X), ValueError, "vmap",
        ["at least one argument"]),
    Bad("vmap-scalar-input", lambda: vmap(lambda a: a)(W.tensor(1.0)), ValueError, "vmap",
        ["shape ()"]),
    Bad("vmap-int-argument-mapped", lambda: vmap(lambda a, b: a * b)(X, 3), ValueError, "vmap",
        ["argument 1", "int"]),
    Bad("vmap-returns-int", lambda: vmap(lambda a: 3)(X), ValueError, "vmap", ["int"]),
    Bad("vmap-returns-none", lambda: vmap(lambda a: None)(X), ValueError, "vmap", ["NoneType"]),
    Bad("vmap-item", lambda: vmap(lambda a: a.item())(X), RuntimeError, "vmap", ["'item'"]),
    Bad("vmap-dim-out-of-range-inside", lambda: vmap(lambda a: a.sum(1))(W.ones(2, 3)),
        IndexError, "vmap", ["dimension 1"]),
    # silent: out_dims=5 was taken modulo the rank and moved the batch dim to 1.
    Bad("vmap-out-dims-out-of-range", lambda: vmap(lambda a: a, out_dims=5)(W.ones(2, 3)),
        IndexError, "vmap", ["out_dims=5"]),
    Bad("vmap-out-dims-str", lambda: vmap(lambda a: a, out_dims="1")(W.ones(2, 3)), ValueError,
        "vmap", ["'1'"]),
    Bad("vmap-matmul-mismatch", lambda: vmap(lambda a: a @ W.ones(4, 2))(W.ones(2, 3)),
        ValueError, "matmul", ["(2, 4, 2)"]),
    Bad("vmap-broadcast-mismatch", lambda: vmap(lambda a: a + W.ones(4))(W.ones(2, 3)),
        ValueError, "add", ["(4,)"]),
]

CASES = GRAD + VJP_JVP + VMAP


@parametrize(CASES)
def test_bad_input(case):
    check(case)
