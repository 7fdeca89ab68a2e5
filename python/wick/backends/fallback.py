"""wick.backends.fallback: the CPU fallback for ops a device has no kernel for, made visible.

    wick.backends.fallback.set_mode("error")   # refuse instead of copying (strict mode)
    x = wick.ones(1000, device="sim")
    wick.where(x > 0, x, -x)                   # RuntimeError: [where] no sim kernel ...
    wick.backends.fallback.set_mode("warn")    # the default: warn once per op, then count
    print(wick.backends.fallback.stats())      # {'where': (calls, copy seconds, kernel seconds)}

When a device lacks an op, wick copies the inputs to the host, runs the CPU kernel and copies the
results back (Note [operator fallback] in core/dispatch.h), as PyTorch's CPU fallback for
PrivateUse1 backends does, and as TensorFlow places an op without a GPU kernel on the CPU.
"""

import contextlib

from wick import _C

MODES = ("warn", "silent", "error")


def mode():
    """'warn' (warn once per op, then count), 'silent' (count only) or 'error' (refuse)."""
    return _C._fallback_mode()


def set_mode(new_mode):
    _C._set_fallback_mode(new_mode)


@contextlib.contextmanager
def fallback_mode(new_mode):
    """Temporarily sets the mode: `with fallback_mode("error"): model(x)` finds every op that
    falls back on the way."""
    previous = mode()
    set_mode(new_mode)
    try:
        yield
    finally:
        set_mode(previous)


def stats():
    """{op name: (calls, seconds copying to and from the host, seconds in the CPU kernel)} for
    every op that fell back since the last reset()."""
    return dict(_C._fallback_stats())


def reset():
    _C._reset_fallback_stats()


def missing_kernels(device):
    """The ops `device` ("cuda", "sim") has no kernel for: the porting checklist."""
    return list(_C._missing_kernels(device))
