"""Adam and AdamW (torch.optim.Adam / AdamW): one fused C++ update per parameter."""

from wick import _C
from wick.optim.optimizer import Optimizer, _check_betas, _check_number


def _check(name, lr, betas, eps, weight_decay, amsgrad, maximize):
    _check_number(name, "learning rate", lr)
    _check_number(name, "epsilon value", eps)
    _check_betas(name, betas)
    _check_number(name, "weight_decay value", weight_decay)
    if amsgrad or maximize:
        raise ValueError(f"[{name}] amsgrad=True and maximize=True are not supported by wick")


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None):
        _check(type(self).__name__, lr, betas, eps, weight_decay, amsgrad, maximize)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _make_cpp(self, groups):
        d = self.defaults
        return _C._optim.Adam(groups, d["lr"], d["betas"][0], d["betas"][1], d["eps"],
                              d["weight_decay"], self._decoupled)

    def _checked(self, group):
        if group.get("amsgrad") or group.get("maximize"):
            raise ValueError(f"[{type(self).__name__}] amsgrad=True and maximize=True are not "
                             f"supported by wick")
        return group


class AdamW(Adam):
    """Adam with decoupled weight decay: p <- p (1 - lr wd) before the Adam update."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused)
