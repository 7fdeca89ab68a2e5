"""The adaptive-rate optimizers outside Adam's family (torch.optim): RMSprop, Adagrad and
Adadelta; the C++ updates are in nn/optim/adaptive.cpp."""

from wick.optim.optimizer import Optimizer


class RMSprop(Optimizer):
    """Gradients scaled by a running RMS, optionally centered and with momentum."""

    _checks = (("lr", "learning rate"), ("eps", "epsilon value"), ("momentum", "momentum value"),
               ("weight_decay", "weight_decay value"), ("alpha", "alpha value"))
    _unsupported = ("maximize", "differentiable")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))


class Adagrad(Optimizer):
    """Each coordinate's rate divided by the root of its summed squared gradients."""

    _checks = (("lr", "learning rate"), ("lr_decay", "lr_decay value"),
               ("weight_decay", "weight_decay value"),
               ("initial_accumulator_value", "initial_accumulator_value value"),
               ("eps", "epsilon value"))
    _unsupported = ("maximize",)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False):
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize))


class Adadelta(Optimizer):
    """Steps scaled by the RMS of past steps over the RMS of gradients, so lr defaults to 1."""

    _checks = (("lr", "learning rate"), ("rho", "rho value", dict(high=1.0)),
               ("eps", "epsilon value"), ("weight_decay", "weight_decay value"))
    _unsupported = ("maximize",)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 maximize=False):
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach))
