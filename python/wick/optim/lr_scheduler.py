"""Learning-rate schedules (torch.optim.lr_scheduler), run by the C++ schedules of
nn/optim/lr_scheduler.h. A schedule reads the optimizer's current options, computes the rates in
C++, and writes them back into the optimizer's param_groups dicts after every step() (Note
[param_groups sync] in python/bind_optim.cpp), so the dicts always show the rate in use."""

import math
import numbers
import types

from wick import _C
from wick.optim.plateau import ReduceLROnPlateau, _check_optimizer  # noqa: F401

_optim = _C._optim


class LRScheduler:
    def __init__(self, optimizer, make):
        _check_optimizer(optimizer, type(self).__name__)
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        optimizer._sync()
        self._cpp = make(optimizer._cpp)
        self._pull()

    def _pull(self):
        """Copies the schedule's rates (and momentum, for OneCycleLR) into the dicts."""
        cpp = self.optimizer._cpp
        for i, group in enumerate(self.optimizer.param_groups):
            options = cpp.group_options(i)
            group["lr"] = options["lr"]
            if "momentum" in group and "momentum" in options:
                group["momentum"] = options["momentum"]
            if "betas" in group and "beta1" in options:
                group["betas"] = (options["beta1"], group["betas"][1])

    def step(self, epoch=None):
        if epoch is not None:
            raise ValueError(f"[{type(self).__name__}.step] step(epoch) is deprecated in PyTorch "
                             f"and not supported; call step() once per epoch (or batch)")
        self.optimizer._sync()
        self._cpp.step()
        self._pull()

    def get_last_lr(self):
        return list(self._cpp.get_last_lr())

    @property
    def last_epoch(self):
        return self._cpp.last_epoch

    def state_dict(self):
        sd = self._cpp.state_dict()
        return {"last_epoch": int(sd["last_epoch"].item()), "base_lrs": sd["base_lrs"].tolist()}

    def load_state_dict(self, state_dict):
        name = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, dict):
            raise TypeError(f"[{name}] expected a dict, got {type(state_dict).__name__}")
        for key in ("last_epoch", "base_lrs"):
            if key not in state_dict:
                raise KeyError(f"[{name}] the state dict has no '{key}'")
        self.optimizer._sync()
        self._cpp.load_state_dict({
            # float64, so that the C++ check sees 1.5 as 1.5, not as a truncated 1
            "last_epoch": _C.tensor(state_dict["last_epoch"], dtype=_C.float64),
            "base_lrs": _C.tensor(state_dict["base_lrs"], dtype=_C.float64)})
        self._pull()


_LRScheduler = LRScheduler


class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        super().__init__(optimizer, lambda o: _optim.StepLR(o, step_size, gamma))


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        super().__init__(optimizer, lambda o: _optim.MultiStepLR(o, list(milestones), gamma))


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        super().__init__(optimizer, lambda o: _optim.CosineAnnealingLR(o, T_max, eta_min))


class LinearLR(LRScheduler):
    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        super().__init__(optimizer,
                         lambda o: _optim.LinearLR(o, start_factor, end_factor, total_iters))


class OneCycleLR(LRScheduler):
    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        _check_optimizer(optimizer, "OneCycleLR")
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("[OneCycleLR] You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            _positive_int("OneCycleLR", "epochs", epochs)
            _positive_int("OneCycleLR", "steps_per_epoch", steps_per_epoch)
            total_steps = epochs * steps_per_epoch
        _positive_int("OneCycleLR", "total_steps", total_steps)
        if isinstance(max_lr, (list, tuple)):
            if len(set(max_lr)) != 1:
                raise ValueError("[OneCycleLR] per-group max_lr values are not supported")
            max_lr = max_lr[0]
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"[OneCycleLR] anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy!r}")
        for group in optimizer.param_groups:
            group["initial_lr"] = max_lr / div_factor
            group["max_lr"] = max_lr
            group["min_lr"] = group["initial_lr"] / final_div_factor
        super().__init__(optimizer, lambda o: _optim.OneCycleLR(
            o, max_lr, total_steps, pct_start, anneal_strategy == "cos", cycle_momentum,
            base_momentum, max_momentum, div_factor, final_div_factor, three_phase))


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        self.gamma = gamma
        super().__init__(optimizer, lambda o: _optim.ExponentialLR(o, gamma))


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch); the Python functions are called from the C++
    schedule at every step."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        _check_optimizer(optimizer, "LambdaLR")
        groups = len(optimizer.param_groups)
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * groups
        else:
            if len(lr_lambda) != groups:
                raise ValueError(f"[LambdaLR] Expected {groups} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"[LambdaLR] lr_lambda must be callable; got "
                                f"{type(fn).__name__}")
        super().__init__(optimizer, lambda o: _optim.LambdaLR(
            o, [_number_returning(fn) for fn in self.lr_lambdas]))

    def state_dict(self):
        # As PyTorch: a plain function is not saved; a callable object's attributes are.
        sd = super().state_dict()
        sd["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                            for fn in self.lr_lambdas]
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        lr_lambdas = state_dict.pop("lr_lambdas", [None] * len(self.lr_lambdas))
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)
        super().load_state_dict(state_dict)


class CosineAnnealingWarmRestarts(LRScheduler):
    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0, last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        if isinstance(T_0, bool) or not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"[CosineAnnealingWarmRestarts] Expected positive integer T_0, but "
                             f"got {T_0}")
        if isinstance(T_mult, bool) or not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"[CosineAnnealingWarmRestarts] Expected integer T_mult >= 1, but "
                             f"got {T_mult}")
        self.T_0, self.T_mult, self.eta_min = T_0, T_mult, eta_min
        super().__init__(optimizer,
                         lambda o: _optim.CosineAnnealingWarmRestarts(o, T_0, T_mult, eta_min))


class CyclicLR(LRScheduler):
    """Cyclical rates; with cycle_momentum, SGD's momentum (or, as in PyTorch 2, Adam's beta1)
    cycles the opposite way."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1,
                 verbose=False):
        _no_resume(last_epoch)
        _check_optimizer(optimizer, "CyclicLR")
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"[CyclicLR] mode is invalid and scale_fn is None (mode={mode!r})")
        if scale_fn is not None and scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"[CyclicLR] scale_mode must be 'cycle' or 'iterations'; got "
                             f"{scale_mode!r}")
        if cycle_momentum and "momentum" not in optimizer.defaults and \
                "betas" not in optimizer.defaults:
            raise ValueError(f"[CyclicLR] optimizer must support momentum with `cycle_momentum` "
                             f"option enabled ({type(optimizer).__name__} has neither momentum "
                             f"nor betas)")
        base_momentums = _format_param("base_momentum", optimizer, base_momentum)
        max_momentums = _format_param("max_momentum", optimizer, max_momentum)
        for lr, group in zip(base_lrs, optimizer.param_groups):
            group["lr"] = lr
        by_cycle = scale_mode == "cycle" if scale_fn is not None else mode != "exp_range"
        self.mode, self.gamma, self.max_lrs = mode, gamma, list(max_lrs)
        super().__init__(optimizer, lambda o: _optim.CyclicLR(
            o, list(base_lrs), list(max_lrs), float(step_size_up),
            -1.0 if step_size_down is None else float(step_size_down), mode, gamma, scale_fn,
            by_cycle, cycle_momentum, list(base_momentums), list(max_momentums)))
        self.base_lrs = list(base_lrs)


class SequentialLR(LRScheduler):
    """Runs `schedulers` one after another, switching at each of `milestones`."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose=False):
        _no_resume(last_epoch)
        for i, s in enumerate(schedulers):
            if not isinstance(s, LRScheduler):
                raise TypeError(f"[SequentialLR] schedulers[{i}] is a {type(s).__name__}, not "
                                f"an LRScheduler")
            if s.optimizer is not optimizer:
                raise ValueError("[SequentialLR] Sequential Schedulers expects all schedulers to "
                                 "belong to the same optimizer, but got schedulers at index "
                                 f"{i} to be different than the optimizer passed in.")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        super().__init__(optimizer, lambda o: _optim.SequentialLR(
            o, [s._cpp for s in self._schedulers], self._milestones))

    def state_dict(self):
        sd = super().state_dict()
        sd["_milestones"] = list(self._milestones)
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        for s, saved in zip(self._schedulers, state_dict.pop("_schedulers", [])):
            if saved["last_epoch"] >= 0:  # the schedules not reached yet have nothing to restore
                s.load_state_dict(saved)
        state_dict.pop("_milestones", None)
        super().load_state_dict(state_dict)


def _format_param(name, optimizer, param):
    """One value per parameter group (PyTorch's CyclicLR._format_param)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"[CyclicLR] expected {len(optimizer.param_groups)} values for "
                             f"{name}, got {len(param)}")
        return list(param)
    return [param] * len(optimizer.param_groups)


def _no_resume(last_epoch):
    if last_epoch != -1:
        raise ValueError(f"[LRScheduler] last_epoch={last_epoch!r}: last_epoch other than -1 is "
                         f"not supported; use load_state_dict")


def _positive_int(where, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"[{where}] Expected positive integer {name}, but got {value!r}")


def _number_returning(fn):
    """fn, checked to return a number: the C++ schedule calls it, and a string or None coming
    back would only show as a failed conversion there, without the value."""

    def checked(epoch):
        value = fn(epoch)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"[LambdaLR] lr_lambda({epoch}) returned {value!r} "
                            f"({type(value).__name__}); it must return a number (the factor "
                            f"of the initial lr)")
        if not math.isfinite(value):  # the rate would become NaN or infinite silently
            raise ValueError(f"[LambdaLR] lr_lambda({epoch}) returned {value}; the factor must "
                             f"be finite")
        return float(value)

    return checked
