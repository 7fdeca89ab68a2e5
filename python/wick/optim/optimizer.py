"""Optimizer: PyTorch's interface over the C++ optimizers of nn/optim/, and the one skeleton every
wick.optim optimizer runs on.

A subclass is its PyTorch signature and a few declarations (Note [the Python skeleton]): the
ranges its constructor checks (`_checks`), the PyTorch options wick lacks (`_unsupported`) and, if
it needs one, a check across options (`_validate`). The base checks them, builds the parameter
groups, and makes the C++ optimizer of the same name (`_C._optim.make`), whose step skeleton
(Note [the step skeleton] in nn/optim/optimizer.cpp) runs the update.

param_groups is a list of plain dicts, as in PyTorch, and it is the source of truth: step()
copies each group's numbers into the C++ optimizer first (Note [param_groups sync] in
python/bind_optim.cpp), so `optimizer.param_groups[0]["lr"] = 0.01` takes effect at the next
step.
"""

import math
import numbers
from collections import OrderedDict

from wick import _C

_required = object()


def _check_number(optimizer, label, value, low=0.0, high=math.inf, high_open=False):
    """One hyperparameter of a constructor: a real number (not a bool) with low <= value <= high
    (or < high), finite; PyTorch's messages ("Invalid learning rate: -1") prefixed with the
    optimizer's name. NaN fails every comparison, so it is refused too; the C++ optimizer checks
    the same ranges again for groups and loaded state dicts (nn/optim.h, OptionCheck)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"[{optimizer}] {label} must be a number; got "
                        f"{type(value).__name__} {value!r}")
    inside = low <= value < high if high_open else low <= value <= high
    if not (inside and math.isfinite(value)):
        raise ValueError(f"[{optimizer}] Invalid {label}: {value}")


class Optimizer:
    # Note [the Python skeleton]
    # What a subclass declares. _checks: (option, label[, bounds for _check_number]) in the order
    # PyTorch checks them; "betas" is checked as a pair in [0, 1). _unsupported: options wick
    # lacks, accepted while falsy and refused otherwise, at construction and at every step (a
    # group dict can switch one on later).
    _checks = ()
    _unsupported = ()

    def __init__(self, params, defaults):
        name = type(self).__name__
        for key, label, *bounds in self._checks:
            value = defaults[key]
            if key == "betas":
                _check_betas(name, value)
                defaults["betas"] = tuple(value)
            elif value is not _required:
                _check_number(name, label, value, **(bounds[0] if bounds else {}))
        self._validate(defaults)
        self._checked(defaults)
        self.defaults = defaults
        if isinstance(params, _C.Tensor):
            raise TypeError(f"[{name}] params argument given to the optimizer should be an "
                            f"iterable of Tensors or dicts, but got a Tensor")
        groups = list(params)
        if not groups:
            raise ValueError(f"[{name}] optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.param_groups = []
        self._cpp = None
        for g in groups:
            self._add_group(g)
        # A required default (SGD's lr) is then given by the first group, as in PyTorch.
        first = self.param_groups[0]
        made = {k: first[k] if v is _required else v for k, v in defaults.items()}
        # The C++ optimizer of the nearest wick.optim class: a user's subclass of Adam is an Adam.
        cpp_name = next(c.__name__ for c in type(self).__mro__
                        if c.__module__.startswith("wick.optim."))
        self._cpp = _C._optim.make(cpp_name, [self._checked(g) for g in self.param_groups],
                                   self._checked(made))

    def _validate(self, defaults):
        """Checks across options (SGD's Nesterov needs momentum); none by default."""

    # ---- groups ----

    def _add_group(self, group):
        if not isinstance(group, dict):
            raise TypeError(f"[{type(self).__name__}] a parameter group must be a dict; got "
                            f"{type(group).__name__}")
        if "params" not in group:
            raise KeyError(f"[{type(self).__name__}] a parameter group needs 'params'")
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, _C.Tensor) else list(params)
        name = type(self).__name__
        for p in group["params"]:
            if not isinstance(p, _C.Tensor):
                raise TypeError(f"[{name}] optimizer can only optimize Tensors, but one of the "
                                f"params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"[{name}] can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            if value is _required and key not in group:
                raise ValueError(f"[{name}] parameter group didn't specify a value of required "
                                 f"optimization parameter {key}")
            group.setdefault(key, value)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError(f"[{name}] some parameters appear in more than one parameter group")
        self.param_groups.append(group)
        return group

    def add_param_group(self, param_group):
        group = self._add_group(param_group)
        try:
            self._cpp.add_param_group(self._checked(group))
        except BaseException:
            self.param_groups.pop()  # the C++ optimizer refused it: leave both as they were
            raise

    def _checked(self, group):
        """The group as the C++ side reads it, with the options wick lacks refused (every step:
        a plain loop, as this is on the step's path)."""
        for key in self._unsupported:
            if group.get(key):
                _refuse_unsupported(type(self).__name__, **{key: group[key]})
        return group

    def _sync(self):
        cpp = self._cpp
        for i, group in enumerate(self.param_groups):
            cpp.set_group_options(i, self._checked(group))

    # ---- the update ----

    def zero_grad(self, set_to_none=True):
        self._cpp.zero_grad(set_to_none)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with _C_enable_grad():
                loss = closure()
        self._sync()
        self._cpp.step()
        return loss

    # ---- state ----

    def state_dict(self):
        """{"state": {index: {name: tensor}}, "param_groups": [{options..., "params": [ids]}]},
        PyTorch's layout (parameters numbered across groups in order)."""
        self._sync()
        flat = self._cpp.state_dict()
        state = {}
        for key, value in flat.items():
            parts = key.split(".")
            if parts[0] == "state":
                state.setdefault(int(parts[1]), {})[".".join(parts[2:])] = value
        groups, index = [], 0
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = list(range(index, index + len(g["params"])))
            index += len(g["params"])
            groups.append(packed)
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restores what state_dict() returned. All or nothing: the structure is checked here and
        every option and state entry by the C++ optimizer (nn/optim.h) before the optimizer or
        its param_groups dicts change, so a failed load leaves both exactly as they were."""
        name = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, dict):
            raise TypeError(f"{name}: expected a dict, got {type(state_dict).__name__}")
        for key in ("state", "param_groups"):
            if key not in state_dict:
                raise KeyError(f"{name}: the state dict has no '{key}'")
        groups, state = state_dict["param_groups"], state_dict["state"]
        if not isinstance(groups, (list, tuple)) or not all(isinstance(g, dict) for g in groups):
            raise TypeError(f"{name}: 'param_groups' must be a list of dicts; got "
                            f"{type(groups).__name__}")
        if not isinstance(state, dict):
            raise TypeError(f"{name}: 'state' must be a dict; got {type(state).__name__}")
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{name}: loaded state dict has a different number of parameter "
                             f"groups ({len(groups)}, the optimizer has {len(self.param_groups)})")
        for i, (mine, saved) in enumerate(zip(self.param_groups, groups)):
            saved_params = saved.get("params")
            if not isinstance(saved_params, (list, tuple)) or \
                    len(mine["params"]) != len(saved_params):
                got = len(saved_params) if isinstance(saved_params, (list, tuple)) else \
                    repr(saved_params)
                raise ValueError(f"{name}: loaded state dict contains a parameter group that "
                                 f"doesn't match the size of optimizer's group {i} "
                                 f"({got} parameters, the optimizer has {len(mine['params'])})")
        self._sync()
        flat = OrderedDict((k, v) for k, v in self._cpp.state_dict().items()
                           if not k.startswith("state."))
        for index, entries in state.items():
            if isinstance(index, bool) or not isinstance(index, int) or \
                    not isinstance(entries, dict):
                raise TypeError(f"{name}: 'state' maps parameter indices to dicts of tensors; "
                                f"got {index!r}: {type(entries).__name__}")
            for entry, value in entries.items():
                if isinstance(value, bool) or not isinstance(value, (_C.Tensor, int, float)):
                    raise TypeError(f"{name}: state entry '{entry}' of parameter {index} must "
                                    f"be a tensor or a number; got {type(value).__name__}")
                if not isinstance(value, _C.Tensor):
                    value = _C.tensor(value, dtype=_C.float64)
                if index < 0:
                    raise ValueError(f"{name}: state for parameter {index}, a negative index")
                flat[f"state.{index}.{entry}"] = value
        self._cpp.load_state_dict(flat, [self._checked(dict(g)) for g in groups])
        # Loaded and checked: only now do the dicts change.
        for mine, saved in zip(self.param_groups, groups):
            for k, v in saved.items():
                if k != "params":
                    mine[k] = v

    @property
    def state(self):
        """Per-parameter state, keyed by parameter (a snapshot)."""
        sd = self.state_dict()["state"]
        params = [p for g in self.param_groups for p in g["params"]]
        return {params[i]: s for i, s in sd.items()}

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(k for k in g if k != "params"):
                lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"


def _C_enable_grad():
    from wick.autograd.grad_mode import enable_grad

    return enable_grad()


def _refuse_unsupported(optimizer, **options):
    """PyTorch options wick does not implement (maximize, differentiable, capturable): accepted
    at their defaults, refused otherwise, so that a script relying on them fails loudly."""
    for key, value in options.items():
        if value:
            raise ValueError(f"[{optimizer}] {key}={value!r} is not supported by wick")


def _check_betas(optimizer, betas):
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(f"[{optimizer}] betas must be a pair of numbers; got {betas!r}")
    _check_number(optimizer, "beta parameter at index 0", betas[0], high=1.0, high_open=True)
    _check_number(optimizer, "beta parameter at index 1", betas[1], high=1.0, high_open=True)
