"""wick.cuda: GPUs, streams, events and the caching allocator's statistics (torch.cuda).

    if wick.cuda.is_available():
        x = wick.randn(1024, 1024, device="cuda")
        print(wick.cuda.memory_summary())

The functions are cuda/api.h's, bound in python/bind_cuda.cpp. In a build without CUDA, or on a
machine without a GPU, is_available() is False, device_count() is 0 and the others raise a
RuntimeError that says which of the two it is - except the memory counters, which read 0 (and
memory_stats() {}) and empty_cache(), which does nothing, as in torch.cuda, so that code which
logs memory runs unchanged on a CPU. The allocator itself - its pools, rounding and
statistics - is core/memory/caching_allocator.h.
"""

import contextlib

from wick import _C

_cuda = _C._cuda

Stream = _cuda.Stream
Event = _cuda.Event
CUDAGraph = _cuda.CUDAGraph
is_available = _cuda.is_available
device_count = _cuda.device_count
current_device = _cuda.current_device


def _index(device):
    """A device argument as torch.cuda takes it (None, an int, "cuda:1", a wick.device) -> index,
    -1 meaning the current device."""
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    device = _C.device(device) if isinstance(device, str) else device
    if device.type != "cuda":
        raise ValueError(f"[cuda] expected a CUDA device; got {device}")
    return -1 if device.index is None else device.index


def set_device(device):
    _cuda.set_device(_index(device))


def current_stream(device=None):
    return _cuda.current_stream(_index(device))


def default_stream(device=None):
    return _cuda.default_stream(_index(device))


def get_device_name(device=None):
    return _cuda.get_device_name(_index(device))


class _DeviceProperties:
    """What torch.cuda.get_device_properties returns: name, major, minor, total_memory (bytes),
    multi_processor_count."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    return _DeviceProperties(_cuda.get_device_properties(_index(device)))


def synchronize(device=None):
    _cuda.synchronize(_index(device))


def memory_allocated(device=None):
    """Bytes occupied by tensors on the device (rounded as the allocator rounds them)."""
    return _cuda.memory_allocated(_index(device)) if is_available() else 0


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the device: allocated plus cached."""
    return _cuda.memory_reserved(_index(device)) if is_available() else 0


def max_memory_allocated(device=None):
    return _cuda.max_memory_allocated(_index(device)) if is_available() else 0


def max_memory_reserved(device=None):
    return _cuda.max_memory_reserved(_index(device)) if is_available() else 0


def memory_stats(device=None):
    """The allocator's counters under PyTorch's keys ("allocated_bytes.all.current", ...)."""
    return _cuda.memory_stats(_index(device)) if is_available() else {}


def empty_cache():
    """Returns the cached, unused segments to the device (cudaFree)."""
    if is_available():
        _cuda.empty_cache()


def memory_summary(device=None, abbreviated=False):
    """The allocator's statistics as a table, like torch.cuda.memory_summary()."""
    return _cuda.memory_summary(_index(device), abbreviated)


def set_per_process_memory_fraction(fraction, device=None):
    """Caps what the allocator may reserve on the device at `fraction` of its memory; beyond it,
    allocations raise wick.OutOfMemoryError as if the device were full."""
    _cuda.set_per_process_memory_fraction(fraction, _index(device))


def reset_peak_memory_stats(device=None):
    _cuda.reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device=None):
    _cuda.reset_accumulated_memory_stats(_index(device))


@contextlib.contextmanager
def stream(s):
    """Ops inside the block queue their kernels on stream `s` (torch.cuda.stream)."""
    if s is None:
        yield
        return
    _cuda.enter_stream(s)
    try:
        yield
    finally:
        _cuda.exit_stream()


class graph:
    """``with wick.cuda.graph(g):`` captures the block's GPU work into CUDAGraph `g` instead of
    running it (torch.cuda.graph); ``g.replay()`` then launches all of it with one call, on the
    same memory. The block runs on a side stream (the default stream cannot be captured). Run
    the work once before capturing, so that libraries set themselves up outside the capture; to
    give a replay new data, copy it into the tensors the block read. If the block raises, the
    capture is abandoned and `g` stays empty. Note [capturing a graph] in cuda/graph.cpp."""

    def __init__(self, cuda_graph, stream=None):
        self.cuda_graph = cuda_graph
        self._stream = stream
        self._context = None

    def __enter__(self):
        synchronize()  # the capture must not see work still queued from before
        self._context = stream(self._stream if self._stream is not None else Stream())
        self._context.__enter__()
        try:
            self.cuda_graph.capture_begin()
        except BaseException:
            self._context.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph.reset()
        finally:
            self._context.__exit__(None, None, None)
        return False


def start_memory_trace(path):
    """Writes every allocation and free as a JSON line to `path` until stop_memory_trace();
    tools/alloc_replay replays such a trace under each allocator policy."""
    _cuda.start_memory_trace(path)


def stop_memory_trace():
    _cuda.stop_memory_trace()


def versions():
    """The CUDA runtime, driver and cuDNN versions found at run time (0 where absent)."""
    return {"runtime": _cuda.runtime_version(), "driver": _cuda.driver_version(),
            "cudnn": _cuda.cudnn_version()}


def _make_amp_module():
    """wick.cuda.amp: torch.cuda.amp's older spellings - GradScaler with init_scale first (device
    fixed to "cuda") and autocast without a device argument - kept because course code and
    tutorials written before torch.amp still use them."""
    import sys
    import types

    from wick import amp as _amp_module

    class GradScaler(_amp_module.GradScaler):
        def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                             enabled)

    class autocast(_amp_module.autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            import wick

            super().__init__("cuda", dtype=wick.float16 if dtype is None else dtype,
                             enabled=enabled, cache_enabled=cache_enabled)

    module = types.ModuleType(__name__ + ".amp", _make_amp_module.__doc__)
    module.GradScaler, module.autocast = GradScaler, autocast
    sys.modules[module.__name__] = module
    return module


amp = _make_amp_module()
