"""The 2-D padding layers (torch.nn.modules.padding): constant, zero, reflection and replication
padding (F.pad)."""

from wick.nn import functional as F
from wick.nn.modules.module import Module


def _quadruple(padding):
    if isinstance(padding, (tuple, list)):
        if len(padding) != 4:
            raise ValueError(f"padding must be an int or a 4-tuple (left, right, top, bottom); "
                             f"got {tuple(padding)}")
        return tuple(padding)
    return (padding,) * 4


class _Pad2d(Module):
    mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _quadruple(padding)
        if self.mode == "constant":
            self.value = value

    def forward(self, input):
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        if self.mode == "constant":
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class ConstantPad2d(_Pad2d):
    def __init__(self, padding, value):
        super().__init__(padding, value)


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad2d(_Pad2d):
    mode = "reflect"


class ReplicationPad2d(_Pad2d):
    mode = "replicate"
