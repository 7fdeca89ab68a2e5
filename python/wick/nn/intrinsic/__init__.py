"""Fused float modules (torch.ao.nn.intrinsic): what wick.quantization.fuse_modules puts in
place of conv + relu and linear + relu, so that convert() can swap each pair for one quantized
kernel whose requantization clamps at the output zero point (the relu for free). Like
PyTorch's, they are Sequentials, so their state_dict keys are "0.weight", "0.bias"."""

from wick.nn.modules.container import Sequential
from wick.nn.modules.conv import Conv2d
from wick.nn.modules.linear import Linear
from wick.nn.modules.activation import ReLU


class _FusedModule(Sequential):
    _parts = ()

    def __init__(self, *modules):
        for module, kind in zip(modules, self._parts):
            if type(module) is not kind:
                raise TypeError(f"[{type(self).__name__}] expected {kind.__name__} here; got "
                                f"{type(module).__name__}")
        if len(modules) != len(self._parts):
            raise TypeError(f"[{type(self).__name__}] takes "
                            f"{' + '.join(p.__name__ for p in self._parts)}")
        super().__init__(*modules)


class ConvReLU2d(_FusedModule):
    _parts = (Conv2d, ReLU)


class LinearReLU(_FusedModule):
    _parts = (Linear, ReLU)
