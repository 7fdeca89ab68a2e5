"""Lab 11: operator fallback - find the op that falls back, measure it, give it a kernel.

sim is a device with kernels for part of the op table. Every other op runs through the CPU
fallback (Note [operator fallback] in core/dispatch.h): its inputs are copied to the host, the
CPU kernel runs, its outputs are copied back, and wick.backends.fallback.stats() counts and
times each op. Here you read those figures, time an op with and without its kernel, turn a
hidden fallback into an error and locate it, predict a fallback's cost from the bytes it copies,
and write the missing kernel in C++ (sim_where.cpp), loaded into the running wick the way
torch.utils.cpp_extension.load loads a PyTorch extension."""

import ctypes
import glob
import hashlib
import os
import shutil
import statistics
import subprocess
import time
import traceback

import wick
from wick.backends import fallback, sim

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


# ---- 1. which ops fall back, and where their time goes ----

def fallback_report(workload):
    """Runs workload() once, from zeroed counters, with fallbacks counted silently (the mode that
    was set is put back afterwards), and returns one row per op that fell back, the most
    expensive first: {"op", "calls", "copy_s", "kernel_s", "copy_share"}, where copy_share is
    copy_s / (copy_s + kernel_s)."""
    # TODO(11): fallback_report: reset(), run under fallback_mode("silent"), then read fallback.stats()
    raise NotImplementedError("fallback_report: reset(), run under fallback_mode(\"silent\"), then read fallback.stats()")


# ---- 2. a fair timer, and an op with and without its kernel ----

def median_time(fn, repeats=7, warmup=1):
    """Seconds per call of fn(): `warmup` untimed calls (the first call fills the caching
    allocator and the caches), then the median of `repeats` timed calls, which a descheduled
    call on a busy machine cannot move the way it moves a mean."""
    # TODO(11): median_time: warmup untimed calls, then time each of `repeats` calls (time.perf_counter)
    raise NotImplementedError("median_time: warmup untimed calls, then time each of `repeats` calls (time.perf_counter)")


def with_and_without_kernel(op, fn, repeats=7):
    """Times fn(), which calls `op` on sim, first falling back, then with a sim kernel for `op`
    (sim.add_kernel: the CPU's kernel run in place on sim's memory, as a port would), and takes
    the kernel away again. Returns {"fallback_s", "kernel_s", "slowdown", "copy_share", "calls"},
    with calls and copy_share from the fallback runs' stats for `op`."""
    # TODO(11): with_and_without_kernel: time it silently, read stats()[op]; add_kernel, time, remove_kernel (finally)
    raise NotImplementedError("with_and_without_kernel: time it silently, read stats()[op]; add_kernel, time, remove_kernel (finally)")


# ---- 3. strict mode: a hidden fallback becomes an error you can locate ----

def first_fallback(fn):
    """Runs fn() with the fallback refused (strict mode, the mode put back afterwards) and returns
    (op, frame) for the first op without a sim kernel: the op's name from the error
    ("[where] no sim kernel, ..."), and the innermost traceback entry, the Python line that
    called the op (a traceback.FrameSummary: filename, lineno, name, line). None when fn() runs
    without a fallback; any other error propagates."""
    # TODO(11): first_fallback: fallback_mode("error"); the op is in "[op]"; frame: extract_tb(...)[-1]
    raise NotImplementedError("first_fallback: fallback_mode(\"error\"); the op is in \"[op]\"; frame: extract_tb(...)[-1]")


def porting_order(fn):
    """Every op of fn() that falls back on sim, in the order fn() first calls them: find the first
    one in strict mode, give it a kernel (sim.add_kernel), run again, until fn() runs clean. The
    kernels added here are taken away before returning, so sim is left as it was."""
    # TODO(11): porting_order: first_fallback, add_kernel, repeat; remove the kernels added (finally)
    raise NotImplementedError("porting_order: first_fallback, add_kernel, repeat; remove the kernels added (finally)")


# ---- 4. a cost model: bytes copied at a measured rate, plus the CPU kernel ----

def fallback_bytes(inputs, outputs):
    """Bytes one fallback moves between sim and the host for these tensors. The kernel's signature
    says which is which (core/kernels.h): a `const Tensor&` input is copied to the host once, a
    `Tensor&` output is copied to the host and back (detail::HostFrame in core/dispatch.h)."""
    # TODO(11): fallback_bytes: sum of the inputs' nbytes, plus twice the outputs'
    raise NotImplementedError("fallback_bytes: sum of the inputs' nbytes, plus twice the outputs'")


def seconds_per_byte(row, bytes_per_call):
    """The copy cost per byte measured on one op: a fallback_report() row of that op, and the bytes
    one of its calls moves (fallback_bytes)."""
    # TODO(11): seconds_per_byte: the row's copy seconds per call, divided by the bytes per call
    raise NotImplementedError("seconds_per_byte: the row's copy seconds per call, divided by the bytes per call")


def predict_fallback(kernel_s, nbytes, copy_seconds_per_byte):
    """Seconds of one fallback: the CPU kernel (`kernel_s`, timed where the op has a kernel) plus
    `nbytes` copied at the measured cost per byte."""
    # TODO(11): predict_fallback: kernel time plus the bytes times the cost per byte
    raise NotImplementedError("predict_fallback: kernel time plus the bytes times the cost per byte")


# ---- 5. your kernel: sim_where.cpp, compiled and loaded into this process ----

_LIBRARIES = {}


def _build_dir():
    """The build folder whose libwick.so the running extension uses (build/python/wick/_C*.so)."""
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(wick._C.__file__))))
    if not os.path.exists(os.path.join(build, "libwick.so")):
        build = os.path.abspath(os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build")))
    return build


def build_kernel():
    """Compiles sim_where.cpp (next to this file) into a shared library linked against libwick and
    loads it into this process, as torch.utils.cpp_extension.load does; returns the ctypes handle.
    A library is named by its source's hash, so an edited file is built and loaded afresh."""
    source = os.path.join(HERE, "sim_where.cpp")
    with open(source, "rb") as f:
        digest = hashlib.sha1(f.read()).hexdigest()[:12]
    if digest in _LIBRARIES:
        return _LIBRARIES[digest]
    build = _build_dir()
    out_dir = os.environ.get("LAB_OUT") or os.path.join(build, "tutorials")
    os.makedirs(out_dir, exist_ok=True)
    library = os.path.join(out_dir, f"lab11-{os.path.basename(HERE)}-sim_where-{digest}.so")
    if not os.path.exists(library):
        for old in glob.glob(library.rsplit("-", 1)[0] + "-*.so"):
            os.remove(old)
        compiler = ["ccache", "g++"] if shutil.which("ccache") else ["g++"]
        command = compiler + ["-std=c++17", "-O2", "-march=native", "-fPIC", "-shared",
                              "-I" + ROOT, "-I" + os.path.join(ROOT, "tutorials", "common"),
                              source, "-o", library + ".tmp", "-L" + build, "-lwick",
                              "-Wl,-rpath," + build]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"sim_where.cpp does not compile:\n{done.stderr[-4000:]}")
        os.replace(library + ".tmp", library)
    _LIBRARIES[digest] = ctypes.CDLL(library)
    return _LIBRARIES[digest]


def use_my_where_kernel(enable=True):
    """Puts your sim_where in the kernel table's (where, sim) cell, or empties the cell so that
    where falls back again. A gap not yet written raises NotImplementedError here."""
    message = ctypes.create_string_buffer(1024)
    status = build_kernel().lab11_set_where_kernel(int(enable), message, len(message))
    if status == 1:
        raise NotImplementedError(message.value.decode())
    if status != 0:
        raise RuntimeError(message.value.decode())
