"""RMSprop (torch.optim.RMSprop): gradients scaled by a running RMS, optionally centered and with
momentum; the C++ update is in nn/optim_adaptive.cpp."""

from wick import _C
from wick.optim.optimizer import Optimizer, _check_number, _refuse_unsupported


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        _check_number("RMSprop", "learning rate", lr)
        _check_number("RMSprop", "epsilon value", eps)
        _check_number("RMSprop", "momentum value", momentum)
        _check_number("RMSprop", "weight_decay value", weight_decay)
        _check_number("RMSprop", "alpha value", alpha)
        _refuse_unsupported("RMSprop", maximize=maximize, differentiable=differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _make_cpp(self, groups):
        d = self.defaults
        return _C._optim.RMSprop(groups, d["lr"], d["alpha"], d["eps"], d["weight_decay"],
                                 d["momentum"], bool(d["centered"]))

    def _checked(self, group):
        _refuse_unsupported("RMSprop", maximize=group.get("maximize"),
                            differentiable=group.get("differentiable"))
        return group
