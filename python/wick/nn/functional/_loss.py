"""The losses of wick.nn.functional. The math is C++; the wrappers accept PyTorch's full argument
lists (legacy size_average/reduce included) and add what the C++ layer leaves to composition:
class weights, probability targets."""

from wick import _C

_nn = _C._nn


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's deprecated size_average/reduce arguments, mapped to reduction."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduce(loss, reduction, op="loss"):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"[{op}] {reduction!r} is not a valid value for reduction")


def _class_dim(input):
    return 1 if input.dim() > 1 else 0


def _check_tensors(op, **tensors):
    """Loss arguments must be tensors: a one-line TypeError naming the loss and the argument."""
    for name, value in tensors.items():
        if value is not None and not isinstance(value, _C.Tensor):
            raise TypeError(f"[{op}] {name} must be a Tensor; got {type(value).__name__} {value!r}")


def _check_class_weight(op, input, weight):
    """A class-weight vector must have one entry per class (PyTorch raises RuntimeError)."""
    classes = input.shape[_class_dim(input)]
    if weight.dim() != 1 or weight.shape[0] != classes:
        raise RuntimeError(f"[{op}] weight tensor should be defined either for all {classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{tuple(weight.shape)}")


def _check_class_targets(op, input, target, ignore_index):
    """Class-index targets: the input's shape without the class dim, and each target in
    [0, classes) unless it is ignore_index (Note [index bounds]); -1 must not wrap."""
    if target.is_floating_point():
        raise TypeError(f"[{op}] target must hold class indices (an integer tensor); got "
                        f"{target.dtype}")
    expected = tuple(input.shape[:1]) + tuple(input.shape[2:]) if input.dim() > 1 else ()
    if tuple(target.shape) != expected:
        raise ValueError(f"[{op}] Expected input batch_size and shape {expected} to match target "
                         f"shape {tuple(target.shape)} (input shape {tuple(input.shape)})")
    classes = input.shape[_class_dim(input)]
    bad = ((target < 0) | (target >= classes)) & (target != ignore_index)
    if bad.any().item():
        value = target[bad].reshape(-1)[0].item()
        raise IndexError(f"[{op}] Target {value} is out of bounds for {classes} classes "
                         f"(ignore_index is {ignore_index})")


def _class_weighted_nll(op, logp, target, weight, ignore_index, reduction):
    """nll_loss with per-class weights: the weighted mean divides by the targets' weights."""
    _check_class_weight(op, logp, weight)
    _check_class_targets(op, logp, target, ignore_index)
    unbatched = logp.dim() == 1  # one sample: [C] and a 0-d target
    if unbatched:
        logp, target = logp.unsqueeze(0), target.reshape(1)
    valid = target != ignore_index
    safe = target.masked_fill(valid.logical_not(), 0)
    picked = -logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = weight.index_select(0, safe.reshape(-1)).reshape(tuple(safe.shape)) * valid
    loss = picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    if unbatched and reduction == "none":
        return loss.reshape(())
    return _reduce(loss, reduction, op)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    _check_tensors("cross_entropy", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.is_floating_point():  # class probabilities, same shape as input
        if tuple(target.shape) != tuple(input.shape):
            # PyTorch raises here too; broadcasting a probability target is never meant.
            raise RuntimeError(f"[cross_entropy] a probability (float) target must have the "
                               f"input's shape {tuple(input.shape)}; got {tuple(target.shape)}")
        logp = input.log_softmax(_class_dim(input))
        if label_smoothing > 0:
            n = input.shape[_class_dim(input)]
            target = target * (1 - label_smoothing) + label_smoothing / n
        if weight is not None:
            _check_class_weight("cross_entropy", input, weight)
            shape = [1] * input.dim()
            shape[_class_dim(input)] = -1
            logp = logp * weight.reshape(shape)
        loss = -(logp * target).sum(_class_dim(input))
        return _reduce(loss, reduction, "cross_entropy")
    if weight is not None:
        if label_smoothing != 0:
            raise ValueError("cross_entropy: weight with label_smoothing is not supported")
        return _class_weighted_nll("cross_entropy", input.log_softmax(_class_dim(input)), target,
                                   weight, ignore_index, reduction)
    return _nn.cross_entropy(input, target, ignore_index, reduction, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    _check_tensors("nll_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _class_weighted_nll("nll_loss", input, target, weight, ignore_index, reduction)
    return _nn.nll_loss(input, target, ignore_index, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nn.mse_loss(input, target, _legacy_reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nn.l1_loss(input, target, _legacy_reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    _check_tensors("binary_cross_entropy_with_logits", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is None:
        return _nn.binary_cross_entropy_with_logits(input, target, reduction, pos_weight)
    loss = _nn.binary_cross_entropy_with_logits(input, target, "none", pos_weight) * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    _check_tensors("binary_cross_entropy", input=input, target=target, weight=weight)
    return _nn.binary_cross_entropy(input, target, weight,
                                    _legacy_reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return _nn.smooth_l1_loss(input, target, _legacy_reduction(size_average, reduce, reduction),
                              beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    return _nn.huber_loss(input, target, reduction, delta)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    return _nn.kl_div(input, target, _legacy_reduction(size_average, reduce, reduction),
                      log_target)
