"""fuse_modules (torch.ao.quantization.fuse_modules): merges conv + bn (+ relu), conv + relu and
linear + relu into one module before quantization. BatchNorm is folded into the convolution
(eval mode: its running statistics are constants):

    w' = w * gamma / sqrt(var + eps)       (per output channel)
    b' = (b - mean) * gamma / sqrt(var + eps) + beta

and a following ReLU makes a fused ConvReLU2d / LinearReLU, which convert() turns into one int8
kernel that clamps at the output zero point. The first module of each group is replaced by the
fused one, the others by Identity, so forward() runs unchanged."""

import copy

import wick
from wick.nn.intrinsic import ConvReLU2d, LinearReLU
from wick.nn.modules.activation import ReLU
from wick.nn.modules.batchnorm import BatchNorm2d
from wick.nn.modules.conv import Conv2d
from wick.nn.modules.linear import Identity, Linear
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter


def fuse_conv_bn_eval(conv, bn):
    """A copy of conv with bn folded into its weight and bias."""
    if conv.training or bn.training:
        raise RuntimeError("[fuse_modules] folding BatchNorm needs eval mode (call "
                           "model.eval() first); conv.training="
                           f"{conv.training}, bn.training={bn.training}")
    if bn.running_mean is None:
        raise ValueError("[fuse_modules] cannot fold a BatchNorm2d without running statistics "
                         "(track_running_stats=False)")
    if bn.num_features != conv.out_channels:
        raise ValueError(f"[fuse_modules] BatchNorm2d has {bn.num_features} features but the "
                         f"conv has {conv.out_channels} output channels")
    fused = copy.deepcopy(conv)
    with wick.no_grad():
        gamma = bn.weight.detach() if bn.weight is not None else wick.ones_like(bn.running_mean)
        beta = bn.bias.detach() if bn.bias is not None else wick.zeros_like(bn.running_mean)
        b = conv.bias.detach() if conv.bias is not None else wick.zeros_like(bn.running_mean)
        factor = gamma * wick.rsqrt(bn.running_var + bn.eps)
        fused.weight = Parameter(conv.weight.detach() * factor.reshape(-1, 1, 1, 1))
        fused.bias = Parameter((b - bn.running_mean) * factor + beta)
    return fused


def _fuse(mods):
    kinds = tuple(type(m) for m in mods)
    if kinds == (Conv2d, BatchNorm2d):
        return fuse_conv_bn_eval(*mods)
    if kinds == (Conv2d, BatchNorm2d, ReLU):
        return ConvReLU2d(fuse_conv_bn_eval(mods[0], mods[1]), mods[2])
    if kinds == (Conv2d, ReLU):
        return ConvReLU2d(mods[0], mods[1])
    if kinds == (Linear, ReLU):
        return LinearReLU(mods[0], mods[1])
    raise ValueError("[fuse_modules] cannot fuse " + " + ".join(k.__name__ for k in kinds)
                     + "; supported: Conv2d+BatchNorm2d, Conv2d+BatchNorm2d+ReLU, Conv2d+ReLU, "
                     "Linear+ReLU")


def _parent(model, path):
    parent_path, _, name = path.rpartition(".")
    try:
        return model.get_submodule(parent_path), name
    except AttributeError:
        raise AttributeError(f"[fuse_modules] the model has no submodule '{path}'") from None


def fuse_modules(model, modules_to_fuse, inplace=False):
    """modules_to_fuse: one list of dotted module names, or a list of such lists, e.g.
    [["conv1", "bn1", "relu1"], ["fc1", "relu3"]]."""
    if not isinstance(model, Module):
        raise TypeError(f"[fuse_modules] expected a wick.nn.Module; got {type(model).__name__}")
    if not isinstance(modules_to_fuse, (list, tuple)) or not modules_to_fuse:
        raise TypeError("[fuse_modules] modules_to_fuse must be a non-empty list of module names "
                        "or of lists of them")
    groups = [modules_to_fuse] if all(isinstance(n, str) for n in modules_to_fuse) \
        else modules_to_fuse
    if not inplace:
        model = copy.deepcopy(model)
    for group in groups:
        if not isinstance(group, (list, tuple)) or len(group) < 2 \
                or not all(isinstance(n, str) for n in group):
            raise TypeError(f"[fuse_modules] each group must list two or more module names; "
                            f"got {group!r}")
        parents = [_parent(model, name) for name in group]
        mods = []
        for (parent, name), path in zip(parents, group):
            if name not in parent._modules or parent._modules[name] is None:
                raise AttributeError(f"[fuse_modules] the model has no submodule '{path}'")
            mods.append(parent._modules[name])
        fused = _fuse(mods)
        for i, (parent, name) in enumerate(parents):
            parent._modules[name] = fused if i == 0 else Identity()
    return model
