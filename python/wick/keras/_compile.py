"""What Model.compile accepts: optimizers, losses and metrics by name, object or function."""

from wick import optim
from wick.nn import functional as F


def _accuracy(output, target):
    """Classes: argmax of the scores against class indices (or against the argmax of one-hot /
    probability targets). One output per example: logits, so a score > 0 predicts 1."""
    if output.dim() >= 2 and output.shape[1] > 1:
        predicted = output.argmax(1)
        if target.dim() == output.dim():
            target = target.argmax(1)
    else:
        predicted = (output.reshape(-1) > 0).long()
        target = (target.reshape(-1) > 0.5).long()
    return (predicted == target).sum().item() / max(target.shape[0], 1)


def _mse(output, target):
    return ((output - target.to(output.dtype)) ** 2).mean().item()


def _mae(output, target):
    return (output - target.to(output.dtype)).abs().mean().item()


OPTIMIZERS = {
    "adam": lambda params: optim.Adam(params),
    "adamw": lambda params: optim.AdamW(params),
    "sgd": lambda params: optim.SGD(params, lr=0.01),  # Keras's default rate
}
LOSSES = {
    "cross_entropy": F.cross_entropy,
    "sparse_categorical_crossentropy": F.cross_entropy,
    "nll": F.nll_loss,
    "mse": F.mse_loss,
    "mean_squared_error": F.mse_loss,
    "l1": F.l1_loss,
    "mae": F.l1_loss,
    "mean_absolute_error": F.l1_loss,
    "bce_with_logits": F.binary_cross_entropy_with_logits,
}
METRICS = {
    "accuracy": _accuracy,
    "acc": _accuracy,
    "mse": _mse,
    "mean_squared_error": _mse,
    "mae": _mae,
    "mean_absolute_error": _mae,
}


def make_optimizer(optimizer, parameters):
    """An optimizer over `parameters` from a name, an optimizer, or a function of the
    parameters (e.g. wick.optim.Adam, or lambda p: wick.optim.SGD(p, lr=0.1, momentum=0.9))."""
    if isinstance(optimizer, optim.Optimizer):
        owned = {id(p) for p in parameters}
        if not any(id(p) in owned for g in optimizer.param_groups for p in g["params"]):
            raise ValueError("[Model.compile] the optimizer holds none of the model's parameters; "
                             "build it with module.parameters()")
        return optimizer
    if isinstance(optimizer, str):
        if optimizer.lower() not in OPTIMIZERS:
            raise ValueError(f"[Model.compile] unknown optimizer '{optimizer}'; expected one of "
                             f"{', '.join(OPTIMIZERS)}, a wick.optim optimizer or a function "
                             f"params -> optimizer")
        return OPTIMIZERS[optimizer.lower()](parameters)
    if callable(optimizer):
        made = optimizer(parameters)
        if not isinstance(made, optim.Optimizer):
            raise TypeError(f"[Model.compile] the optimizer function returned "
                            f"{type(made).__name__}, not a wick.optim.Optimizer")
        return made
    raise TypeError(f"[Model.compile] optimizer must be a name ({', '.join(OPTIMIZERS)}), a "
                    f"wick.optim optimizer or a function params -> optimizer; got "
                    f"{type(optimizer).__name__}")


def make_loss(loss):
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise ValueError(f"[Model.compile] unknown loss '{loss}'; expected one of "
                             f"{', '.join(LOSSES)} or a function (output, target) -> Tensor")
        return LOSSES[loss]
    if callable(loss):
        return loss
    raise TypeError(f"[Model.compile] loss must be a name ({', '.join(LOSSES)}) or a function "
                    f"(output, target) -> Tensor; got "
                    f"{'nothing' if loss is None else type(loss).__name__}")


def make_metrics(metrics):
    """[(name, function(output, target) -> float)] in the order given."""
    if metrics is None:
        return []
    if isinstance(metrics, str) or not isinstance(metrics, (list, tuple)):
        raise TypeError(f"[Model.compile] metrics must be a list, e.g. ['accuracy']; got "
                        f"{metrics!r}")
    made = []
    for m in metrics:
        if isinstance(m, str):
            if m not in METRICS:
                raise ValueError(f"[Model.compile] unknown metric '{m}'; expected one of "
                                 f"{', '.join(METRICS)} or a function (output, target) -> number")
            made.append((m, METRICS[m]))
        elif callable(m):
            made.append((getattr(m, "__name__", type(m).__name__), m))
        else:
            raise TypeError(f"[Model.compile] a metric must be a name or a function; got "
                            f"{type(m).__name__}")
    names = [name for name, _ in made]
    if len(set(names)) != len(names) or "loss" in names:
        raise ValueError(f"[Model.compile] metric names must be unique and not 'loss'; got "
                         f"{names}")
    return made
