"""Adagrad (torch.optim.Adagrad): each coordinate's rate divided by the root of its summed squared
gradients; the C++ update is in nn/optim_adaptive.cpp."""

from wick import _C
from wick.optim.optimizer import Optimizer, _check_number, _refuse_unsupported


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False):
        _check_number("Adagrad", "learning rate", lr)
        _check_number("Adagrad", "lr_decay value", lr_decay)
        _check_number("Adagrad", "weight_decay value", weight_decay)
        _check_number("Adagrad", "initial_accumulator_value value", initial_accumulator_value)
        _check_number("Adagrad", "epsilon value", eps)
        _refuse_unsupported("Adagrad", maximize=maximize)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _make_cpp(self, groups):
        d = self.defaults
        return _C._optim.Adagrad(groups, d["lr"], d["lr_decay"], d["weight_decay"],
                                 d["initial_accumulator_value"], d["eps"])

    def _checked(self, group):
        _refuse_unsupported("Adagrad", maximize=group.get("maximize"))
        return group
