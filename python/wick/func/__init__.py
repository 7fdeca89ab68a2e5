"""wick.func: JAX-style function transforms (torch.func's names and signatures).

    grad(f)(x)                  df/dx for a scalar f           (jax.grad)
    grad_and_value(f)(x)        (df/dx, f(x))                   (jax.value_and_grad, reversed)
    vjp(f, x) -> (y, vjp_fn)    vjp_fn(v) = v^T J               (jax.vjp)
    jvp(f, (x,), (t,))          (f(x), J t)                     (jax.jvp)
    jacrev(f)(x)                the Jacobian, one vjp per output element
    hessian(f)(x)               jacrev(jacrev(f))(x)
    vmap(f)(xs)                 f mapped over a batch dimension (jax.vmap), see wick/func/_vmap.py

JAX and functorch implement these as transforms of a traced program, with forward-mode AD and
per-primitive batching rules at every level. wick builds the autodiff transforms on its tape
(autograd.grad with create_graph=True), which is how torch.autograd.functional works: jvp is the
"double vjp" trick (the vjp is linear in the cotangent u, so differentiating v^T J with respect
to u gives J t), and jacrev stacks one vjp per output element.

Functions are treated as pure functions of their explicit arguments (JAX's rule): tensors they
close over are constants of the transform. The results carry a graph only when an input already
required grad (an outer transform or autograd differentiates through this one), so
grad(grad(f)), jacrev(jacrev(f)) and vmap(grad(f)) compose.
"""

import builtins

import wick
from wick import _C
from wick.func import _vmap
from wick.func._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "hessian", "vmap"]


def _stand_in(x, fn_name):
    """A differentiable stand-in for input x: a new leaf, or (when x already carries a graph, as
    inside another transform) an alias with its own node, so this transform's gradient is with
    respect to x alone while an outer one still reaches through it."""
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"{fn_name}: expected tensor inputs to differentiate; got "
                        f"{type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{fn_name}: only floating-point inputs can be differentiated; got "
                        f"{x.dtype}")
    return x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True)


def _argnums_tuple(argnums, nargs, fn_name):
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    if not single and not (isinstance(argnums, tuple) and
                           all(isinstance(n, int) and not isinstance(n, bool) for n in argnums)):
        raise TypeError(f"{fn_name}: argnums must be an int or a tuple of ints; got {argnums!r}")
    nums = (argnums,) if single else argnums
    if not nums:
        raise ValueError(f"{fn_name}: argnums must name at least one argument")
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"{fn_name}: argnums {argnums} is out of range for a function "
                             f"called with {nargs} positional arguments")
    return single, tuple(n % nargs for n in nums)


def _as_tuple(out, fn_name):
    """f's output as a tuple of tensors (one tensor, or a tuple or list of them)."""
    if isinstance(out, _C.Tensor):
        return (out,)
    if isinstance(out, (tuple, list)) and all(isinstance(o, _C.Tensor) for o in out):
        return tuple(out)
    raise RuntimeError(f"{fn_name}: expected f(*primals) to return a tensor or a tuple of "
                       f"tensors; got {type(out).__name__}")


def _split_aux(out, fn_name):
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fn_name}: with has_aux=True, f must return a (output, aux) tuple; "
                           f"got {type(out).__name__}"
                           f"{f' of length {len(out)}' if isinstance(out, tuple) else ''}")
    return out


def _tensor_tuple(values, what, fn_name):
    """primals or tangents: a tuple (or list) of tensors, as f(*primals) is called."""
    if not isinstance(values, (tuple, list)):
        raise TypeError(f"{fn_name}: {what} must be a tuple of tensors (f is called as "
                        f"f(*{what})); got {type(values).__name__}")
    for i, v in enumerate(values):
        if not isinstance(v, _C.Tensor):
            raise TypeError(f"{fn_name}: {what}[{i}] must be a Tensor; got {type(v).__name__}")
    return tuple(values)


def _check_shapes(fn_name, what, given, against, expected):
    for i, (g, e) in enumerate(zip(given, expected)):
        if tuple(g.shape) != tuple(e.shape):
            raise ValueError(f"{fn_name}: {what} {i} has shape {tuple(g.shape)} but {against} {i} "
                             f"has shape {tuple(e.shape)}")


def _grads(outputs, inputs, cotangents, create_graph):
    grads = wick.autograd.grad(outputs, inputs, cotangents, retain_graph=True,
                               create_graph=create_graph, allow_unused=True)
    return tuple(wick.zeros_like(x) if g is None else g for g, x in zip(grads, inputs))


def grad_and_value(func, argnums=0, has_aux=False):
    """Returns a function computing (gradient, value) of the scalar func with respect to the
    arguments named by argnums (an int gives one gradient, a tuple a tuple of them)."""

    def wrapper(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), "grad")
        if _vmap._batch_size(args, kwargs) is not None:
            return _per_example_grad_and_value(func, args, kwargs, single, nums, has_aux)
        create_graph = builtins.any(isinstance(args[n], _C.Tensor) and args[n].requires_grad
                                    for n in nums)
        args = list(args)
        inputs = []
        for n in nums:
            args[n] = _stand_in(args[n], "grad")
            inputs.append(args[n])
        with wick.enable_grad():
            out = func(*args, **kwargs)
        aux = None
        if has_aux:
            out, aux = _split_aux(out, "grad_and_value(f)(*args)")
        if not isinstance(out, _C.Tensor) or out.numel() != 1:
            shape = tuple(out.shape) if isinstance(out, _C.Tensor) else type(out).__name__
            raise RuntimeError(f"grad_and_value(f)(*args): expected f(*args) to return a scalar "
                               f"tensor; got {shape}. Maybe you wanted vjp or jacrev?")
        if not out.requires_grad:  # f does not depend on the inputs: the gradient is zero
            grads = tuple(wick.zeros_like(x) for x in inputs)
        else:
            grads = _grads([out], inputs, None, create_graph)
        if not create_graph:
            grads = tuple(g.detach() for g in grads)
            out = out.detach()
        result = grads[0] if single else grads
        return ((result, (out, aux)) if has_aux else (result, out))

    return wrapper


def _per_example_grad_and_value(func, args, kwargs, single, nums, has_aux):
    """grad inside vmap (vmap(grad(f))): examples are independent under vmap, so the gradient of
    the sum of the per-example values with respect to per-example copies of the inputs is the
    batch of per-example gradients. An input shared by the batch (in_dims=None) gets one copy
    per example, so its gradient is per example too, not summed."""
    size = _vmap._batch_size(args, kwargs)
    args = list(args)
    leaves = []
    for n in nums:
        x = args[n]
        physical = x.value if isinstance(x, _vmap.BatchedTensor) else \
            x.unsqueeze(0).expand(size, *x.shape).contiguous()
        leaf = physical.detach().requires_grad_(True)
        args[n] = _vmap.BatchedTensor(leaf)
        leaves.append(leaf)
    with wick.enable_grad():
        out = func(*args, **kwargs)
    aux = None
    if has_aux:
        out, aux = out
    if not isinstance(out, _vmap.BatchedTensor) or out.numel() != 1:
        raise RuntimeError("grad_and_value(f)(*args): expected f(*args) to return a scalar "
                           "tensor per example")
    grads = wick.autograd.grad([out.value.sum()], leaves, allow_unused=True)
    grads = tuple(_vmap.BatchedTensor(wick.zeros_like(leaf) if g is None else g)
                  for g, leaf in zip(grads, leaves))
    value = _vmap.BatchedTensor(out.value.detach())
    result = grads[0] if single else grads
    return (result, (value, aux)) if has_aux else (result, value)


def grad(func, argnums=0, has_aux=False):
    """Returns a function computing the gradient of the scalar func (torch.func.grad)."""
    with_value = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        gradient, value = with_value(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func, *primals, has_aux=False):
    """Returns (func(*primals), vjp_fn); vjp_fn(*cotangents) gives one gradient per primal."""
    create_graph = builtins.any(isinstance(p, _C.Tensor) and p.requires_grad for p in primals)
    inputs = [_stand_in(p, "vjp") for p in primals]
    with wick.enable_grad():
        out = func(*inputs)
    aux = None
    if has_aux:
        out, aux = _split_aux(out, "vjp(f, *primals)")
    outputs = _as_tuple(out, "vjp(f, *primals)")

    def vjp_fn(*cotangents):
        if len(cotangents) == 1 and not isinstance(cotangents[0], _C.Tensor):
            cotangents = tuple(cotangents[0])
        if len(cotangents) != len(outputs):
            raise ValueError(f"vjp_fn: expected {len(outputs)} cotangents (one per output); got "
                             f"{len(cotangents)}")
        _check_shapes("vjp_fn", "cotangent", cotangents, "output", outputs)
        live = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
        if not live:
            return tuple(wick.zeros_like(x) for x in inputs)
        grads = _grads([o for o, _ in live], inputs, [c for _, c in live], create_graph)
        return grads if create_graph else tuple(g.detach() for g in grads)

    shown = out if create_graph else (out.detach() if isinstance(out, _C.Tensor)
                                      else type(out)(o.detach() for o in out))
    return (shown, vjp_fn, aux) if has_aux else (shown, vjp_fn)


def jvp(func, primals, tangents):
    """Returns (func(*primals), J @ tangents) for a function with one tensor output."""
    primals = _tensor_tuple(primals, "primals", "jvp")
    tangents = _tensor_tuple(tangents, "tangents", "jvp")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: expected as many tangents as primals; got {len(tangents)} "
                         f"tangents for {len(primals)} primals")
    _check_shapes("jvp", "tangent", tangents, "primal", primals)
    create_graph = builtins.any(p.requires_grad for p in primals)
    inputs = [_stand_in(p, "jvp") for p in primals]
    with wick.enable_grad():
        out = func(*inputs)
        if not isinstance(out, _C.Tensor):
            raise RuntimeError("jvp: f must return one tensor")
        if not out.requires_grad:
            return out, wick.zeros_like(out)
        # The vjp u -> u^T J is linear in u; its gradient with respect to u, along the
        # tangents, is J t.
        u = wick.zeros_like(out).requires_grad_(True)
        grads = wick.autograd.grad([out], inputs, [u], create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(grads, tangents) if g is not None and g.requires_grad]
        if not pairs:
            return out.detach(), wick.zeros_like(out)
        (jt,) = wick.autograd.grad([g for g, _ in pairs], [u], [t for _, t in pairs],
                                   create_graph=create_graph, allow_unused=True)
    jt = wick.zeros_like(out) if jt is None else jt
    return (out, jt) if create_graph else (out.detach(), jt.detach())


def jacrev(func, argnums=0):
    """Returns a function computing the Jacobian of func (one tensor output) with respect to the
    arguments named by argnums: shape output.shape + input.shape, one vjp per output element."""

    def wrapper(*args):
        single, nums = _argnums_tuple(argnums, len(args), "jacrev")
        args = list(args)
        create_graph = False
        inputs = []
        for n in nums:
            create_graph |= isinstance(args[n], _C.Tensor) and args[n].requires_grad
            args[n] = _stand_in(args[n], "jacrev")
            inputs.append(args[n])
        with wick.enable_grad():
            out = func(*args)
        if not isinstance(out, _C.Tensor):
            raise RuntimeError("jacrev: f must return one tensor")
        flat = out.reshape(-1)
        rows = [[] for _ in inputs]
        for k in range(flat.numel()):
            if out.requires_grad:
                basis = wick.zeros(flat.numel(), dtype=out.dtype)
                basis[k] = 1.0
                grads = _grads([flat], inputs, [basis], create_graph)
            else:
                grads = tuple(wick.zeros_like(x) for x in inputs)
            for r, g in zip(rows, grads):
                r.append(g)
        jacobians = []
        for x, r in zip(inputs, rows):
            j = (wick.stack(r) if r else wick.zeros(0, *x.shape, dtype=x.dtype))
            j = j.reshape(*out.shape, *x.shape)
            jacobians.append(j if create_graph else j.detach())
        return jacobians[0] if single else tuple(jacobians)

    return wrapper


def hessian(func, argnums=0):
    """Returns a function computing the Hessian of the scalar func: jacrev of jacrev."""
    return jacrev(jacrev(func, argnums), argnums)
