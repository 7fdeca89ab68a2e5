"""Adadelta (torch.optim.Adadelta): steps scaled by the RMS of past steps over the RMS of
gradients, so lr defaults to 1; the C++ update is in nn/optim_adaptive.cpp."""

from wick import _C
from wick.optim.optimizer import Optimizer, _check_number, _refuse_unsupported


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 maximize=False):
        _check_number("Adadelta", "learning rate", lr)
        _check_number("Adadelta", "rho value", rho, high=1.0)
        _check_number("Adadelta", "epsilon value", eps)
        _check_number("Adadelta", "weight_decay value", weight_decay)
        _refuse_unsupported("Adadelta", maximize=maximize)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach)
        super().__init__(params, defaults)

    def _make_cpp(self, groups):
        d = self.defaults
        return _C._optim.Adadelta(groups, d["lr"], d["rho"], d["eps"], d["weight_decay"])

    def _checked(self, group):
        _refuse_unsupported("Adadelta", maximize=group.get("maximize"))
        return group
