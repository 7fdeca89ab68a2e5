"""SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD)."""

import math

from wick import _C
from wick.optim.optimizer import Optimizer, _check_number, _required


class SGD(Optimizer):
    def __init__(self, params, lr=_required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        if lr is not _required:
            _check_number("SGD", "learning rate", lr)
        _check_number("SGD", "momentum value", momentum)
        _check_number("SGD", "dampening value", dampening, low=-math.inf)
        _check_number("SGD", "weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"[SGD] Nesterov momentum requires a momentum and zero dampening; "
                             f"got momentum {momentum} and dampening {dampening}")
        if maximize:
            raise ValueError("[SGD] maximize=True is not supported")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=False,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _make_cpp(self, groups):
        d = self.defaults
        lr = d["lr"] if d["lr"] is not _required else groups[0]["lr"]
        return _C._optim.SGD(groups, lr, d["momentum"], d["dampening"], d["weight_decay"],
                             bool(d["nesterov"]))
