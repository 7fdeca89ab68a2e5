"""What the Python benchmarks share: the source tree on sys.path, OpenBLAS told this processor's
kernel before it loads when its own detection falls back (Debian's OpenBLAS does not recognise
every CPU and then uses its SSE3 kernel, which would make the reference look six times slower
than it is), the kernel's name for the printout, and a median timer.

    import bench_common                  # first: it may re-execute the script (see below)
    bench_common.use_openblas_kernel()   # before numpy/torch are imported
"""

import ctypes
import ctypes.util
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(os.path.abspath(BUILD), "python")]


def openblas_coretype():
    """OpenBLAS's kernel for this processor (Debian's does not recognise every CPU)."""
    flags = open("/proc/cpuinfo").read()
    if " avx512f" in flags:
        return "SkylakeX"
    if " avx2" in flags:
        return "Zen" if "AuthenticAMD" in flags else "Haswell"
    return None


# The kernels OpenBLAS falls back to when its CPU detection does not recognise the processor.
FALLBACK_CORES = {"Prescott", "Core2", "Penryn", "Nehalem", "Atom", "Dunnington"}


def use_openblas_kernel():
    """On a fallback kernel, sets OPENBLAS_CORETYPE to this processor's and re-executes the script
    (OpenBLAS reads it once, when it loads). A kernel the detection recognised is kept: on a
    Cooper Lake, say, OpenBLAS picks "Cooperlake" by itself."""
    if "OPENBLAS_CORETYPE" in os.environ or not openblas_coretype():
        return
    if openblas_corename() in FALLBACK_CORES:
        os.environ["OPENBLAS_CORETYPE"] = openblas_coretype()
        os.execv(sys.executable, [sys.executable] + sys.argv)


def openblas_corename():
    for name in ("openblas", "openblas64_"):
        path = ctypes.util.find_library(name)
        if path:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_corename().decode()
    return "not found"


def median_ms(fn, repeats):
    fn()  # warm-up: first calls allocate caches and segments
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def current_torch_python():
    """The Python of .venv-bench (scripts/setup.sh --bench), which has a current PyTorch 2.x from
    PyPI: the second reference, run in its own process. None when it is not installed."""
    python = os.environ.get("WICK_TORCH2_PYTHON", os.path.join(ROOT, ".venv-bench", "bin", "python"))
    return python if os.access(python, os.X_OK) else None
