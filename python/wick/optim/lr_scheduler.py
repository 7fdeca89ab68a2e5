"""Learning-rate schedules (torch.optim.lr_scheduler), run by the C++ schedules of
nn/lr_scheduler.h. A schedule reads the optimizer's current options, computes the rates in C++,
and writes them back into the optimizer's param_groups dicts after every step() (Note
[param_groups sync] in python/bind_optim.cpp), so the dicts always show the rate in use."""

from wick import _C

_optim = _C._optim


class LRScheduler:
    def __init__(self, optimizer, make):
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
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if isinstance(max_lr, (list, tuple)):
            if len(set(max_lr)) != 1:
                raise ValueError("OneCycleLR: per-group max_lr values are not supported")
            max_lr = max_lr[0]
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        for group in optimizer.param_groups:
            group["initial_lr"] = max_lr / div_factor
            group["max_lr"] = max_lr
            group["min_lr"] = group["initial_lr"] / final_div_factor
        super().__init__(optimizer, lambda o: _optim.OneCycleLR(
            o, max_lr, total_steps, pct_start, anneal_strategy == "cos", cycle_momentum,
            base_momentum, max_momentum, div_factor, final_div_factor, three_phase))


def _no_resume(last_epoch):
    if last_epoch != -1:
        raise ValueError("last_epoch other than -1 is not supported; use load_state_dict")
