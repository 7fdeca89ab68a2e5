"""SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD)."""

from wick import _C
from wick.optim.optimizer import Optimizer, _required


class SGD(Optimizer):
    def __init__(self, params, lr=_required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        if lr is not _required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if maximize:
            raise ValueError("SGD: maximize=True is not supported")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=False,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _make_cpp(self, groups):
        d = self.defaults
        lr = d["lr"] if d["lr"] is not _required else groups[0]["lr"]
        return _C._optim.SGD(groups, lr, d["momentum"], d["dampening"], d["weight_decay"],
                             bool(d["nesterov"]))
