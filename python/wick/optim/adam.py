"""Adam and its relatives (torch.optim): Adam and AdamW, and Adamax, NAdam and RAdam, which share
Adam's betas; the C++ updates are in nn/optim/adam.cpp."""

from wick.optim.optimizer import Optimizer

_ADAM_CHECKS = (("lr", "learning rate"), ("eps", "epsilon value"), ("betas", "betas"),
                ("weight_decay", "weight_decay value"))


class Adam(Optimizer):
    _checks = _ADAM_CHECKS
    _unsupported = ("amsgrad", "maximize")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused))


class AdamW(Adam):
    """Adam with decoupled weight decay: p <- p (1 - lr wd) before the Adam update."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused)


class Adamax(Optimizer):
    """Adam with the infinity norm: the second moment is a running maximum of |grad|."""

    _checks = _ADAM_CHECKS
    _unsupported = ("maximize",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))


class NAdam(Optimizer):
    """Adam with Nesterov momentum and a momentum warm-up (momentum_decay)."""

    _checks = _ADAM_CHECKS + (("momentum_decay", "momentum_decay value"),)
    _unsupported = ("maximize",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, foreach=None):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, foreach=foreach))


class RAdam(Optimizer):
    """Rectified Adam: momentum SGD until the variance estimate can be trusted."""

    _checks = _ADAM_CHECKS
    _unsupported = ("maximize",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach))
