"""wick.backends: switches that choose how the GPU libraries compute (torch.backends).

    wick.backends.cuda.matmul.allow_tf32 = True   # cuBLAS float32 matmuls on TF32 tensor cores
    wick.backends.cudnn.benchmark = True          # time cuDNN's convolution algorithms per shape

They are plain flags in C++ (cuda/api.h); setting them in a build without CUDA is allowed and
changes nothing.
"""

from wick.backends import cuda, cudnn  # noqa: F401
