"""wick.backends.sim: "sim", a second device that runs on the host (sim/sim.h).

    x = wick.randn(64, 10, device="sim")     # memory from the caching allocator of a simulated GPU
    y = (x * 2).relu()                       # sim kernels
    p = wick.softmax(y, 1)                   # no sim kernel: runs on the CPU, copies counted
    print(wick.backends.sim.memory_stats()["reserved_bytes.all.current"])

It has kernels for the elementwise, reduction, indexing, random, copy, GEMM and optimizer ops;
where, softmax, convolution, pooling, batch norm and scatter_add fall back to the CPU
(wick.backends.fallback). It exists so that operator fallback and a backend's allocator can be
studied on a machine without an accelerator; tutorials/11-operator-fallback is the lab.
"""

from wick import _C


def is_available():
    return "sim" in _C._backends()


def device_count():
    return 1 if is_available() else 0


def ops_with_kernels():
    return list(_C._sim_ops())


def add_kernel(op):
    """Gives sim a kernel for `op` - the CPU's, which runs in place on the device's host memory,
    as porting the op would - so it stops falling back."""
    _C._sim_set_kernel(op, True)


def remove_kernel(op):
    """Takes sim's kernel for `op` away: the op falls back to the CPU again."""
    _C._sim_set_kernel(op, False)


def memory_stats():
    """The sim allocator's statistics with torch.cuda.memory_stats()'s keys."""
    return dict(_C._sim_memory_stats())


def memory_allocated():
    return memory_stats().get("allocated_bytes.all.current", 0)


def memory_reserved():
    return memory_stats().get("reserved_bytes.all.current", 0)
