"""wick.backends: switches that choose how the GPU libraries compute (torch.backends), the CPU
fallback, and the sim device.

    wick.backends.cuda.matmul.allow_tf32 = True   # cuBLAS float32 matmuls on TF32 tensor cores
    wick.backends.cudnn.benchmark = True          # time cuDNN's convolution algorithms per shape
    wick.backends.cpu.direct_convolution = False  # CPU convolutions by im2col + GEMM only
    wick.backends.fallback.set_mode("error")      # an op without a kernel on its device raises
    wick.backends.mps.is_available()              # False: there is no Metal backend

The GPU switches are plain flags in C++ (cuda/api.h); setting them in a build without CUDA is
allowed and changes nothing.
"""

from wick.backends import cpu, cuda, cudnn, fallback, mps, sim  # noqa: F401
