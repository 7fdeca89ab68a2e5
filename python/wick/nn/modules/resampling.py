"""Upsample (torch.nn.modules.upsampling), PixelShuffle / PixelUnshuffle
(torch.nn.modules.pixelshuffle) and the 2-D padding layers (torch.nn.modules.padding):
F.interpolate, F.pixel_shuffle and F.pad."""

from wick.nn import functional as F
from wick.nn.modules.module import Module


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + str(self.mode)


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


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
