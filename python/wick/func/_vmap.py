"""vmap: run a function written for one example on a batch of them (jax.vmap, torch.func.vmap).

Note [how vmap works]
Inside the mapped function each batched input is a BatchedTensor: a physical tensor whose dim 0
is the batch, which shows the function only the per-example ("logical") shape. Every op the
function calls on it goes through a batching rule that rewrites the call for the physical tensor
once, for the whole batch:

- elementwise ops (the op table's unary family) run on the physical tensor as they are;
- broadcasting ops (the binary family, where) first give each batched operand the same logical
  rank, so the batch dim lines up and the rest broadcasts from the right as before;
- ops with a dim argument (reductions, softmax, views) shift the dim past the batch dim;
- matmul, linear and conv2d fold the batch into the dims those kernels already batch over.

The rules are chosen by the op table's family where it has one (wick._C._ops()), by hand for the
rest (the rules below). An op without a rule still works: it runs once per example, in a Python
loop, and stacks the results - with a warning, since that is the slow path functorch warns
about too ("There is a performance drop because we have not yet implemented the batching rule").

Module-level functions (wick.sin, wick.nn.functional.relu, ...) take Tensors, so while the
mapped function runs, vmap puts dispatching wrappers in the modules they are looked up in (wick,
wick.nn.functional, wick._C and wick._C._nn) and takes them out afterwards (torch.fx's wrap() patches functions the same way while it
traces). A lock makes vmap calls from several threads take turns.
"""

import functools
import threading
import warnings

import wick
from wick import _C


class BatchedTensor:
    """A batch of tensors seen one example at a time (Note [how vmap works])."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value  # the physical tensor; dim 0 is the batch

    # The logical (per-example) view.
    @property
    def shape(self):
        return wick.Size(tuple(self.value.shape)[1:])

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self.value.dim() - 1

    ndim = property(dim)

    def numel(self):
        return self.shape.numel()

    dtype = property(lambda self: self.value.dtype)
    device = property(lambda self: self.value.device)
    requires_grad = property(lambda self: self.value.requires_grad)

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"BatchedTensor(batch={self.value.shape[0]}, shape={tuple(self.shape)})"

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, (BatchedTensor, _C.Tensor, list)) for i in index):
            return _loop("__getitem__", lambda x, *i: x[i], self, *index)
        return BatchedTensor(self.value[(slice(None),) + index])

    def __getattr__(self, name):
        method = getattr(_C.Tensor, name)  # AttributeError for names tensors lack
        rule = _RULES.get(name)
        if rule is not None:
            return functools.partial(rule, method, self)
        return functools.partial(_loop, name, method, self)


def _logical_rank(x):
    return x.dim() if isinstance(x, (BatchedTensor, _C.Tensor)) else 0


def _batch_size(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, BatchedTensor):
            return a.value.shape[0]
        if isinstance(a, (list, tuple)):
            for item in a:
                if isinstance(item, BatchedTensor):
                    return item.value.shape[0]
    return None


def _wrap(result):
    if isinstance(result, _C.Tensor):
        return BatchedTensor(result)
    if isinstance(result, tuple):
        wrapped = [_wrap(r) for r in result]
        return type(result)(*wrapped) if hasattr(result, "_fields") else tuple(wrapped)
    return result


_warned = set()


def _loop(name, fn, *args, **kwargs):
    """The fallback: fn once per example, results stacked along a new batch dim."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"vmap: no batching rule for '{name}'; it runs once per example in a Python "
                      "loop, which is slow", UserWarning, stacklevel=3)
    size = _batch_size(args, kwargs)

    def pick(a, i):
        if isinstance(a, BatchedTensor):
            return a.value[i]
        if isinstance(a, (list, tuple)) and any(isinstance(x, BatchedTensor) for x in a):
            return type(a)(pick(x, i) for x in a)
        return a

    results = [fn(*[pick(a, i) for a in args], **{k: pick(v, i) for k, v in kwargs.items()})
               for i in range(size)]
    first = results[0]
    if isinstance(first, _C.Tensor):
        return BatchedTensor(wick.stack(results))
    if isinstance(first, tuple):
        parts = [BatchedTensor(wick.stack([r[j] for r in results])) for j in range(len(first))]
        return type(first)(*parts) if hasattr(first, "_fields") else tuple(parts)
    raise RuntimeError(f"vmap: '{name}' returned {type(first).__name__}, which cannot be batched "
                       "(a Python number from a tensor, e.g. .item(), differs per example)")


# The batching rules. Each takes the original function and its arguments.

def _elementwise(fn, x, *args, **kwargs):
    if _batch_size(args, kwargs) is not None:
        return _broadcasting(fn, x, *args, **kwargs)
    return _wrap(fn(x.value, *args, **kwargs))


def _broadcasting(fn, *args, **kwargs):
    rank = max(_logical_rank(a) for a in args)

    def physical(a):
        if not isinstance(a, BatchedTensor):
            return a  # rank <= rank of the batch's logical shape: it broadcasts from the right
        v = a.value
        missing = rank - (v.dim() - 1)
        return v.reshape(v.shape[0], *([1] * missing), *v.shape[1:]) if missing else v

    return _wrap(fn(*[physical(a) for a in args], **kwargs))


def _shift(dim, rank):
    """A logical dim of a tensor of logical rank `rank` as a physical dim."""
    if dim < -rank or dim >= max(rank, 1):
        raise IndexError(f"vmap: dimension {dim} is out of range for a tensor of {rank} "
                         "dimensions (per example)")
    return (dim % rank if rank else 0) + 1


def _with_dim(fn, x, *args, **kwargs):
    """Ops whose first argument after the tensor (or dim=) is a dim or a tuple of dims; no dim
    means all of the example's dims."""
    rank = x.dim()
    if args:
        dim, args = args[0], args[1:]
    else:
        dim = kwargs.pop("dim", None)
    if dim is None:
        if fn.__name__ in ("max", "min", "argmax", "argmin"):
            flat = x.value.reshape(x.value.shape[0], -1)
            return _wrap(fn(flat, 1, *args, **kwargs) if fn.__name__.startswith("arg")
                         else fn(flat, 1, *args, **kwargs)[0])
        dim = tuple(range(rank))
    if isinstance(dim, (tuple, list)):
        dim = tuple(_shift(d, rank) for d in dim)
    else:
        dim = _shift(dim, rank)
    return _wrap(fn(x.value, dim, *args, **kwargs))


def _reshape(fn, x, *shape):
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return BatchedTensor(x.value.reshape(x.value.shape[0], *shape))


def _expand(fn, x, *shape):
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return BatchedTensor(x.value.expand(x.value.shape[0], *shape))


def _permute(fn, x, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return BatchedTensor(x.value.permute(0, *[_shift(d, x.dim()) for d in dims]))


def _transpose(fn, x, a, b):
    return BatchedTensor(x.value.transpose(_shift(a, x.dim()), _shift(b, x.dim())))


def _t(fn, x):
    return x if x.dim() < 2 else _transpose(fn, x, 0, 1)


def _unsqueeze(fn, x, dim):
    return BatchedTensor(x.value.unsqueeze(_shift(dim, x.dim() + 1)))


def _flatten(fn, x, start_dim=0, end_dim=-1):
    if x.dim() == 0:
        return BatchedTensor(x.value.reshape(-1, 1))
    return BatchedTensor(x.value.flatten(_shift(start_dim, x.dim()), _shift(end_dim, x.dim())))


def _matmul(fn, a, b):
    """Gives each operand a batch dim and lines the batch up in front of matmul's own batch dims
    (a vector operand becomes a matrix first, as matmul's rules do, and is squeezed after)."""
    size = _batch_size((a, b), {})
    a_vec, b_vec = _logical_rank(a) == 1, _logical_rank(b) == 1

    def physical(x, vector_shape):
        v = x.value if isinstance(x, BatchedTensor) else x
        batched = isinstance(x, BatchedTensor)
        if (x.dim() == 1):
            v = v.reshape(*((size,) if batched else ()), *vector_shape(x.shape[0]))
        if not batched:
            v = v.unsqueeze(0).expand(size, *v.shape)
        return v

    pa = physical(a, lambda n: (1, n))
    pb = physical(b, lambda n: (n, 1))
    rank = max(pa.dim(), pb.dim())
    pa = pa.reshape(size, *([1] * (rank - pa.dim())), *pa.shape[1:])
    pb = pb.reshape(size, *([1] * (rank - pb.dim())), *pb.shape[1:])
    out = wick.matmul(pa, pb)
    if a_vec:
        out = out.squeeze(-2)
    if b_vec:
        out = out.squeeze(-1)
    return BatchedTensor(out)


def _linear(fn, x, weight, bias=None):
    if isinstance(weight, BatchedTensor) or isinstance(bias, BatchedTensor):
        return _loop("linear", fn, x, weight, bias)
    return BatchedTensor(fn(x.value, weight, bias))


def _images(fn, x, *args, **kwargs):
    """conv2d and pooling: an example is [C, H, W] or [N, C, H, W]; the batch joins N."""
    if _batch_size(args, kwargs) is not None:  # a batched weight: one kernel call per example
        return _loop(fn.__name__, fn, x, *args, **kwargs)
    v = x.value
    if x.dim() == 3:
        return _wrap(fn(v, *args, **kwargs))
    out = fn(v.reshape(-1, *v.shape[2:]), *args, **kwargs)
    return _wrap(out.reshape(v.shape[0], v.shape[1], *out.shape[1:]))


def _joined(fn, tensors, dim=0):
    size = _batch_size((tensors,), {})
    rank = _logical_rank(tensors[0]) + (1 if fn.__name__ == "stack" else 0)
    parts = [t.value if isinstance(t, BatchedTensor) else t.unsqueeze(0).expand(size, *t.shape)
             for t in tensors]
    return BatchedTensor(fn(parts, _shift(dim, rank)))


def _table_rules():
    rules = {}
    for op in _C._ops():
        family = op["family"]
        if family == "unary":
            rules[op["name"]] = _elementwise
        elif family == "binary" or op["name"] == "where":
            rules[op["name"]] = _broadcasting
        elif family == "Reduce":
            rules[op["name"]] = _with_dim
    return rules


_RULES = _table_rules()
_RULES.update({name: _elementwise for name in (
    "relu", "sigmoid", "tanh", "gelu", "silu", "leaky_relu", "elu", "softplus", "clamp", "clip",
    "detach", "clone", "contiguous", "float", "double", "half", "to", "__neg__", "neg", "pow",
    "__pow__", "dropout", "nan_to_num", "sign", "floor", "ceil", "round", "trunc")})
_RULES.update({name: _broadcasting for name in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "add", "sub",
    "mul", "div", "true_divide", "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum",
    "where", "logical_and", "logical_or")})
_RULES.update({name: _with_dim for name in (
    "sum", "mean", "amax", "amin", "prod", "var", "std", "logsumexp", "softmax", "log_softmax",
    "argmax", "argmin", "max", "min", "cumsum", "norm")})
_RULES.update({"reshape": _reshape, "view": _reshape, "expand": _expand, "permute": _permute,
               "transpose": _transpose, "swapaxes": _transpose, "t": _t,
               "unsqueeze": _unsqueeze, "flatten": _flatten, "matmul": _matmul,
               "__matmul__": _matmul, "mm": _matmul, "mv": _matmul, "dot": _matmul,
               "linear": _linear, "conv2d": _images, "max_pool2d": _images,
               "avg_pool2d": _images, "adaptive_avg_pool2d": _images, "cat": _joined,
               "concat": _joined, "stack": _joined})
# Python operators look methods up on the type, not the instance: give BatchedTensor each one.
for _name in [n for n in _RULES if n.startswith("__")] + ["__rmatmul__"]:
    if _name == "__rmatmul__":
        setattr(BatchedTensor, _name, lambda self, other: _matmul(None, other, self))
        continue
    _method = getattr(_C.Tensor, _name, None)
    if _method is not None:
        setattr(BatchedTensor, _name, (lambda rule, method: lambda self, *a, **k:
                                       rule(method, self, *a, **k))(_RULES[_name], _method))


def _dispatching(name, fn):
    rule = _RULES.get(name)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _batch_size(args, kwargs) is None:
            return fn(*args, **kwargs)
        if rule is not None and isinstance(args[0], (BatchedTensor, list, tuple, _C.Tensor)):
            if isinstance(args[0], _C.Tensor) and rule not in (_broadcasting, _matmul):
                return _loop(name, fn, *args, **kwargs)
            return rule(fn, *args, **kwargs)
        return _loop(name, fn, *args, **kwargs)

    return call


_patch_lock = threading.RLock()
# Where user code and wick's Python layer look functions up at call time.
_PATCHED_MODULES = [m for m in (wick, wick.nn.functional, _C, getattr(_C, "_nn", None)) if m]


_wrappers = {}  # (module, name) -> (original function, its dispatching wrapper), made once
_patch_depth = 0


class _Patched:
    """Puts dispatching wrappers in the modules of _PATCHED_MODULES for the mapped call."""

    def __enter__(self):
        global _patch_depth
        _patch_lock.acquire()
        _patch_depth += 1
        self.saved = []
        if _patch_depth > 1:  # already in place (a transform inside the mapped function)
            return self
        for module in _PATCHED_MODULES:
            for name, fn in list(vars(module).items()):
                is_function = type(fn).__name__ in ("builtin_function_or_method", "function")
                if not is_function or name.startswith("_"):
                    continue
                cached = _wrappers.get((module.__name__, name))
                if cached is None or cached[0] is not fn:
                    cached = (fn, _dispatching(name, fn))
                    _wrappers[(module.__name__, name)] = cached
                self.saved.append((module, name, fn))
                setattr(module, name, cached[1])
        return self

    def __exit__(self, *exc):
        global _patch_depth
        for module, name, fn in self.saved:
            setattr(module, name, fn)
        _patch_depth -= 1
        _patch_lock.release()


def _movedim(t, source, destination):
    if t.dim() < 2:
        return t
    order = [d for d in range(t.dim()) if d != source % t.dim()]
    order.insert(destination % t.dim(), source % t.dim())
    return t.permute(*order)


def vmap(func, in_dims=0, out_dims=0):
    """Returns func mapped over dim in_dims of its inputs (None: not mapped), with the results'
    batch dim at out_dims. in_dims is an int, None, or a tuple with one entry per argument."""

    def wrapper(*args):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims has {len(dims)} entries but the function got "
                             f"{len(args)} arguments")
        for d in dims:
            if d is not None and (isinstance(d, bool) or not isinstance(d, int)):
                raise ValueError(f"vmap: in_dims must be an int, None, or a tuple of them (one "
                                 f"per argument); got in_dims={in_dims!r}")
        if isinstance(out_dims, bool) or not isinstance(out_dims, int):
            raise ValueError(f"vmap: out_dims must be an int; got out_dims={out_dims!r}")
        sizes, batched = [], []
        for i, (a, d) in enumerate(zip(args, dims)):
            if isinstance(a, BatchedTensor):
                raise NotImplementedError("vmap: nested vmap (vmap inside a vmapped function) "
                                          "is not supported; vmap over the flattened batch")
            if d is None or not isinstance(a, _C.Tensor):
                if d is not None and not isinstance(a, _C.Tensor):
                    raise ValueError(f"vmap: argument {i} is a {type(a).__name__}, not a tensor; "
                                     "pass in_dims=None for it")
                batched.append(a)
                continue
            if not -a.dim() <= d < max(a.dim(), 1) or a.dim() == 0:
                raise ValueError(f"vmap: in_dims={d} is out of range for argument {i} of shape "
                                 f"{tuple(a.shape)}")
            sizes.append(a.shape[d])
            batched.append(BatchedTensor(_movedim(a, d, 0)))
        if not sizes:
            raise ValueError("vmap: at least one argument must be mapped (in_dims not all None)")
        if len(set(sizes)) > 1:
            raise ValueError(f"vmap: expected all mapped arguments to have the same size in the "
                             f"mapped dimension; got sizes {sizes}")
        with _Patched():
            out = func(*batched)

        def unwrap(o):
            if isinstance(o, _C.Tensor):  # does not depend on the batch: the same for each
                o = BatchedTensor(o.unsqueeze(0).expand(sizes[0], *o.shape))
            if not isinstance(o, BatchedTensor):
                raise ValueError(f"vmap: the function returned {type(o).__name__}; expected "
                                 "tensors")
            rank = o.value.dim()
            if not -rank <= out_dims < rank:
                raise IndexError(f"vmap: out_dims={out_dims} is out of range for an output of "
                                 f"{rank} dimensions (batch dim included)")
            return _movedim(o.value, 0, out_dims)

        return tuple(unwrap(o) for o in out) if isinstance(out, tuple) else unwrap(out)

    return wrapper
