"""SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD); the C++ update is
in nn/optim/sgd.cpp."""

import math

from wick.optim.optimizer import Optimizer, _required


class SGD(Optimizer):
    _checks = (("lr", "learning rate"), ("momentum", "momentum value"),
               ("dampening", "dampening value", dict(low=-math.inf)),
               ("weight_decay", "weight_decay value"))
    _unsupported = ("maximize",)

    def __init__(self, params, lr=_required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable))

    def _validate(self, d):
        if d["nesterov"] and (d["momentum"] <= 0 or d["dampening"] != 0):
            raise ValueError(f"[SGD] Nesterov momentum requires a momentum and zero dampening; "
                             f"got momentum {d['momentum']} and dampening {d['dampening']}")
