"""L-BFGS (torch.optim.LBFGS): quasi-Newton steps from a closure that re-evaluates the loss, with
optional strong-Wolfe line search; the iteration runs in C++ (nn/optim/lbfgs.cpp). As in PyTorch,
its step replaces the skeleton's: it needs the closure."""

import numbers

from wick._C import Tensor
from wick.autograd.grad_mode import enable_grad
from wick.optim.optimizer import Optimizer


class LBFGS(Optimizer):
    _checks = (("lr", "learning rate"), ("tolerance_grad", "tolerance_grad"),
               ("tolerance_change", "tolerance_change"))

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))

    def _validate(self, d):
        for label in ("max_iter", "max_eval", "history_size"):
            value = d[label]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"[LBFGS] {label} must be an integer >= 1; got {value!r}")

    def _checked(self, group):
        _check_line_search(group.get("line_search_fn"))
        return dict(group, strong_wolfe=group.get("line_search_fn") == "strong_wolfe")

    def add_param_group(self, param_group):
        raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    def step(self, closure):
        """One L-BFGS step (up to max_iter iterations); returns the closure's first loss."""
        first = []

        def loss():
            with enable_grad():
                value = closure()
            if isinstance(value, Tensor):
                if value.numel() != 1:
                    raise ValueError(f"[LBFGS.step] the closure must return the loss, one "
                                     f"number; got a tensor of shape {tuple(value.shape)}")
            elif isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"[LBFGS.step] the closure must return the loss (a one-element "
                                f"tensor or a number); got {value!r}")
            if not first:
                first.append(value)
            return float(value)

        self._sync()
        self._cpp.step_closure(loss)
        return first[0]


def _check_line_search(line_search_fn):
    if line_search_fn not in (None, "strong_wolfe"):
        raise RuntimeError(f"only 'strong_wolfe' is supported (line_search_fn="
                           f"{line_search_fn!r})")
