"""pytest set-up for the Python GPU tests: import wick from the source tree (python/) and the
extension from $WICK_BUILD_DIR (else build/), as tests/python/conftest.py does."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
if os.path.isdir(os.path.join(BUILD, "python", "wick")):
    sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(BUILD, "python")]

# Note [torch before wick]: PyTorch's wheel carries its own CUDA libraries (cudart, cuBLAS, NCCL)
# under the same sonames as the toolkit's that wick links. The dynamic loader serves a soname
# from whichever copy was loaded first, so with wick first PyTorch gets the toolkit's or the
# system's copies: an older NCCL lacks symbols it needs (ImportError: undefined symbol
# ncclCommResume, seen with PyPI's torch 2.15 here), and on the GPU machine importing torch after
# wick aborted (free(): invalid pointer) or crashed later. With torch first, wick is served
# PyTorch's copies, of the same major version it was built for.
try:
    import torch  # noqa: F401,E402
except ImportError:
    pass
