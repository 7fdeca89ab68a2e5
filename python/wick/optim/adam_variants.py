"""Adamax, NAdam and RAdam (torch.optim): Adam's relatives, sharing its betas; the C++ updates are
in nn/optim_adaptive.cpp."""

from wick import _C
from wick.optim.optimizer import Optimizer, _check_betas, _check_number, _refuse_unsupported


class _AdamFamily(Optimizer):
    def __init__(self, params, defaults):
        name = type(self).__name__
        _check_number(name, "learning rate", defaults["lr"])
        _check_number(name, "epsilon value", defaults["eps"])
        _check_betas(name, defaults["betas"])
        _check_number(name, "weight_decay value", defaults["weight_decay"])
        if "momentum_decay" in defaults:
            _check_number(name, "momentum_decay value", defaults["momentum_decay"])
        defaults["betas"] = tuple(defaults["betas"])
        self._checked(defaults)
        super().__init__(params, defaults)

    def _make_cpp(self, groups):
        d = self.defaults
        return _C._optim.AdamFamily(type(self).__name__, groups, d["lr"], d["betas"][0],
                                    d["betas"][1], d["eps"], d["weight_decay"],
                                    d.get("momentum_decay", 0.0))

    def _checked(self, group):
        _refuse_unsupported(type(self).__name__, maximize=group.get("maximize"))
        return group


class Adamax(_AdamFamily):
    """Adam with the infinity norm: the second moment is a running maximum of |grad|."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))


class NAdam(_AdamFamily):
    """Adam with Nesterov momentum and a momentum warm-up (momentum_decay)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, foreach=None):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, foreach=foreach))


class RAdam(_AdamFamily):
    """Rectified Adam: momentum SGD until the variance estimate can be trusted."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach))
