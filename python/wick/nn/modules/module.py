"""Module: the base class of every layer and model, written in Python as PyTorch's is, so that
Python subclasses work the same way: assigning a Parameter, a Module or (through
register_buffer) a buffer to an attribute registers it, and the tree of modules drives
parameters(), state_dict(), train()/eval(), to() and printing. The layers' math is C++
(wick.nn.functional); this class only organises it.
"""

from collections import OrderedDict, namedtuple

import wick
from wick import _C
from wick.nn.parameter import Parameter

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])

# While a memory history records (wick.memory._record_memory_history), a callable that runs a
# module call under its module path, so the allocator's history can say which layer allocated;
# None otherwise, which costs a module call one global lookup.
_memory_scope = None

# Note [the module-state epoch]
# wick.compile guards every module's training flag and the identity of every parameter and buffer
# (Note [guards and retracing] in jit/compile.h). Walking the tree on each call would cost more
# than a small compiled model's replay, so every change those guards watch - assigning or
# deleting a parameter, buffer or submodule, train()/eval(), to() - bumps this counter, and the
# guard walks the tree again only when it moved. Editing `_parameters` or `_modules` directly
# bypasses it, as it bypasses every other check of this class.
_state_epoch = 0


def _bump_state_epoch():
    global _state_epoch
    _state_epoch += 1


class _RemovableHandle:
    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key

    def remove(self):
        self._hooks.pop(self._key, None)


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    training: bool
    _next_hook_id = 0

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        # object.__setattr__: our own __setattr__ needs these dicts to exist.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())

    # ---- forward ----

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        if _memory_scope is not None:  # wick.memory is recording: it names the module path
            return _memory_scope(self, args, kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def _add_hook(self, hooks, hook):
        Module._next_hook_id += 1
        hooks[Module._next_hook_id] = hook
        return _RemovableHandle(hooks, Module._next_hook_id)

    def register_forward_pre_hook(self, hook):
        return self._add_hook(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        return self._add_hook(self._forward_hooks, hook)

    # ---- registration ----

    def _check_name(self, kind, name):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string; got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f'{kind} name can\'t be empty or contain ".": "{name}"')

    def register_parameter(self, name, param):
        self._check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (wick.nn.Parameter or None required)")
        self._parameters[name] = param
        _bump_state_epoch()

    def register_buffer(self, name, tensor, persistent=True):
        self._check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (wick.Tensor or None required)")
        self._buffers[name] = tensor
        _bump_state_epoch()
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        self._check_name("module", name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module
        _bump_state_epoch()

    register_module = add_module

    def get_submodule(self, target):
        module = self
        for part in target.split(".") if target else []:
            if part not in module._modules:
                raise AttributeError(f"{module._get_name()} has no submodule `{part}`")
            module = module._modules[part]
        return module

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if params is not None and (name == "training" or name in params or isinstance(
                value, (_C.Tensor, Module)) or name in self._modules or name in self._buffers):
            _bump_state_epoch()  # Note [the module-state epoch]
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._buffers.pop(name, None)
            self._modules.pop(name, None)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(wick.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            modules = self.__dict__.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._parameters.pop(name, None)
            self._buffers.pop(name, None)
            modules[name] = value
        elif "_modules" in self.__dict__ and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (wick.nn.Module or None expected)")
            self._modules[name] = None
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(wick.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Called only when normal lookup fails: parameters, buffers and submodules.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        _bump_state_epoch()
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # ---- the tree ----

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and gradients ----

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        _bump_state_epoch()
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                g.zero_()

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- devices and dtypes ----

    def _apply_tensors(self, convert):
        """convert(tensor) for every parameter (in place: `param.data = ...` keeps the Parameter
        object, so optimizers built earlier still hold it), gradient and buffer."""
        _bump_state_epoch()  # new layouts: a compiled graph must retrace
        with wick.no_grad():
            for module in self.modules():
                for p in module._parameters.values():
                    if p is None:
                        continue
                    p.data = convert(p.data)
                    if p.grad is not None:
                        p.grad = convert(p.grad)
                for name, b in module._buffers.items():
                    if b is not None:
                        module._buffers[name] = convert(b)
        return self

    def to(self, *args, **kwargs):
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, _C.Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, (str, _C.device)):
                device = a
            elif isinstance(a, _C.dtype):
                dtype = a
            else:
                raise TypeError(f"[Module.to] expected a device, a dtype or a tensor; got "
                                f"{type(a).__name__} {a!r}")
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got {dtype}")

        def convert(t):
            target = dtype if (dtype is not None and t.is_floating_point()) else t.dtype
            return t.to(device if device is not None else t.device, target)

        return self._apply_tensors(convert)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else _C.device("cuda", device)
                       if isinstance(device, int) else device)

    def float(self):
        return self.to(wick.float32)

    def double(self):
        return self.to(wick.float64)

    def half(self):
        return self.to(wick.float16)

    def bfloat16(self):
        return self.to(wick.bfloat16)

    # ---- state dicts ----

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True):
        """Copies parameters and buffers from state_dict into this module's tensors (in place).
        A shape mismatch is always an error; with strict, so are missing and unexpected keys.
        Nothing is changed when an error is raised."""
        if not hasattr(state_dict, "items"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, _C.Tensor):
                errors.append(f'While copying the parameter named "{key}", expected a tensor '
                              f"but got {type(value).__name__}.")
            elif tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{target.shape}.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t"
                               + "\n\t".join(errors))
        with wick.no_grad():
            for key, target in own.items():
                if key in state_dict:
                    target.copy_(state_dict[key])
        return _IncompatibleKeys(missing, unexpected)

    # ---- printing ----

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, module in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(module), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
