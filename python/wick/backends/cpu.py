"""wick.backends.cpu: switches of the CPU kernels (torch.backends.cpu, torch.backends.mkldnn).

    wick.backends.cpu.direct_convolution = False   # every convolution runs im2col + GEMM
    wick.backends.cpu.winograd_convolution = False # 3x3 stride-1 ones run directly

3x3 stride-1 float32 convolutions run by default as a direct convolution over padded rows
(Note [direct convolution over padded rows] in core/cpu/conv_direct.h): forward, and the input
gradient of the backward. Turned off, they run im2col + GEMM, the reference the tests and
tutorials/14-convolution compare against. With 16 or more channels each way, padding 1 and batches
of at least one image per thread, forward and input gradient run Winograd's F(2x2, 3x3) over
blocks of 16 tiles instead (Note [Winograd over blocks of 16 tiles] in
core/cpu/winograd_tiles.h) on AVX-512 builds, and so does the weight gradient when the output
channels are a multiple of 16 (Note [Winograd's weight gradient over tiles]);
`winograd_convolution = False` goes back to the direct kernel, and `direct_convolution = False`
turns Winograd off too.
A frozen graph (wick.compile(freeze=True)) chooses when it is built, so set these before
compiling.
"""

import sys
import types

from wick import _C
from wick.backends._flags import flag_property


class _CpuModule(types.ModuleType):
    direct_convolution = flag_property(
        _C._cpu.direct_conv_enabled, _C._cpu.set_direct_conv_enabled,
        "Run 3x3 stride-1 float32 convolutions directly (on by default); off, im2col + GEMM.")
    winograd_convolution = flag_property(
        _C._cpu.winograd_tiles_enabled, _C._cpu.set_winograd_tiles_enabled,
        "Run batched 3x3 stride-1 float32 convolutions of 16+ channels as Winograd F(2x2, 3x3) "
        "(on by default); off, directly.")


def get_cpu_capability():
    """The vector instruction set wick's CPU kernels were compiled for, as PyTorch names it."""
    return _C._cpu.capability()


sys.modules[__name__].__class__ = _CpuModule
