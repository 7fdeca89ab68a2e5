"""ReduceLROnPlateau (torch.optim.lr_scheduler.ReduceLROnPlateau): drops the rates by `factor`
when the metric passed to step() stops improving. The counting runs in C++
(nn/optim/plateau.h); the rates go into the optimizer's param_groups dicts after each step."""

import math
import numbers

from wick import _C

_CONFIG = ("mode", "factor", "patience", "threshold", "threshold_mode", "cooldown", "min_lrs",
           "eps", "verbose")
_COUNTERS = ("best", "num_bad_epochs", "cooldown_counter", "last_epoch")


def _check_optimizer(optimizer, where):
    from wick.optim.optimizer import Optimizer

    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"[{where}] {type(optimizer).__name__} is not an Optimizer")


class ReduceLROnPlateau:
    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8, verbose=False):
        name = "ReduceLROnPlateau"
        _check_optimizer(optimizer, name)
        if factor >= 1.0:
            raise ValueError(f"[{name}] Factor should be < 1.0.; got {factor}")
        groups = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != groups:
                raise ValueError(f"[{name}] expected {groups} min_lrs, got {len(min_lr)}")
            min_lrs = list(min_lr)
        else:
            min_lrs = [min_lr] * groups
        if mode not in ("min", "max"):
            raise ValueError(f"[{name}] mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"[{name}] threshold mode {threshold_mode} is unknown!")
        self.optimizer = optimizer
        self.mode, self.factor, self.patience, self.threshold = mode, factor, patience, threshold
        self.threshold_mode, self.cooldown, self.min_lrs = threshold_mode, cooldown, min_lrs
        self.eps, self.verbose = eps, verbose
        self._build()

    def _build(self):
        self.optimizer._sync()
        self._cpp = _C._optim.ReduceLROnPlateau(
            self.optimizer._cpp, self.mode, self.factor, self.patience, self.threshold,
            self.threshold_mode, self.cooldown, list(self.min_lrs), self.eps)

    def step(self, metrics, epoch=None):
        if epoch is not None:
            raise ValueError("[ReduceLROnPlateau.step] step(metrics, epoch) is deprecated in "
                             "PyTorch and not supported; call step(metrics) once per epoch")
        current = _metric(metrics)
        self.optimizer._sync()
        self._cpp.step(current)
        for group, lr in zip(self.optimizer.param_groups, self._cpp.get_last_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return list(self._cpp.get_last_lr())

    @property
    def best(self):
        return self._cpp.best

    @property
    def num_bad_epochs(self):
        return self._cpp.num_bad_epochs

    @property
    def cooldown_counter(self):
        return self._cpp.cooldown_counter

    @property
    def last_epoch(self):
        return self._cpp.last_epoch

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def state_dict(self):
        sd = {key: getattr(self, key) for key in _CONFIG + _COUNTERS}
        sd["mode_worse"] = math.inf if self.mode == "min" else -math.inf
        return sd

    def load_state_dict(self, state_dict):
        name = "ReduceLROnPlateau.load_state_dict"
        if not isinstance(state_dict, dict):
            raise TypeError(f"[{name}] expected a dict, got {type(state_dict).__name__}")
        missing = [key for key in _COUNTERS if key not in state_dict]
        if missing:
            raise KeyError(f"[{name}] the state dict has no {missing}")
        for key in _COUNTERS:
            value = state_dict[key]
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"[{name}] '{key}' must be a number; got {value!r}")
        saved = {key: getattr(self, key) for key in _CONFIG}
        old_cpp = self._cpp
        try:
            for key in _CONFIG:
                if key in state_dict:
                    setattr(self, key, state_dict[key])
            self._build()
            self._cpp.load_state_dict({key: _C.tensor(float(state_dict[key]), dtype=_C.float64)
                                       for key in _COUNTERS})
        except BaseException:
            for key, value in saved.items():  # a bad state dict changes nothing
                setattr(self, key, value)
            self._cpp = old_cpp
            raise


def _metric(metrics):
    """The number step() compares: a Python number, or a one-element tensor (its .item())."""
    if isinstance(metrics, _C.Tensor):
        if metrics.numel() != 1:
            raise ValueError(f"[ReduceLROnPlateau.step] metrics must be a number or a "
                             f"one-element tensor; got a tensor of shape {tuple(metrics.shape)}")
        return float(metrics.item())
    if isinstance(metrics, bool) or not isinstance(metrics, numbers.Real):
        raise TypeError(f"[ReduceLROnPlateau.step] metrics must be a number (the validation "
                        f"loss, say); got {metrics!r}")
    return float(metrics)
