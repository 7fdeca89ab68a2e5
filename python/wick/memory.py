"""wick.memory: the allocators of core/memory/ from Python, on a simulated device, no GPU needed.

    dev = wick.memory.SimulatedDevice(1 << 30)             # 1 GiB; addresses only ("virtual")
    a = wick.memory.Allocator("caching", dev)              # or "no_caching", "bfc", "bfc_growth"
    p = a.malloc(1000); a.free(p)
    a.memory_stats()["reserved_bytes.all.current"]         # 2097152: one small-pool segment

Traces (what a program asked for) are recorded from the "sim" device's tensors and replayed
under each policy; a memory history (what the allocator did, with owners) is PyTorch's
torch.cuda.memory._record_memory_history / _snapshot / _dump_snapshot, for "sim" and "cuda";
viewer() draws a snapshot as one self-contained HTML page (tools/memory_viewer.py).
"""

import json
import threading

from wick import _C

_M = _C._memory
SimulatedDevice = _M.SimulatedDevice
Allocator = _M.Allocator
round_size = _M.round_size
segment_size = _M.segment_size
read_trace = _M.read_trace
format_replay_table = _M.format_replay_table

GiB = 1 << 30
_ENABLED = (None, False, True, "all", "state", "alloc")


def cpu_memory_stats():
    """The CPU allocator's counters: allocated_bytes now, peak_allocated_bytes since the last
    reset, allocations and frees (wick tensors only; NumPy-backed ones are not counted)."""
    return dict(_M.cpu_stats())


def cpu_reset_peak_memory_stats():
    """Restarts peak_allocated_bytes from what is allocated now."""
    _M.cpu_reset_peak()


def host_cache_stats():
    """The host block cache under the CPU allocator and the kernels' packed weights (Note [host
    block cache] in core/memory/host_cache.h): cached_bytes held for reuse now, its limit_bytes
    (WICK_HOST_CACHE_MB, 1024 MiB by default), hits and misses of requests of 128 KiB and more,
    and blocks given_back to the system because the cache was full."""
    return dict(_M.host_cache_stats())


def empty_host_cache():
    """Gives every cached host block back to the system (torch.cuda.empty_cache, for the host)."""
    _M.empty_host_cache()


def set_host_cache_limit(nbytes):
    """The most the host cache may hold, in bytes; 0 turns it off. Trims it at once."""
    _M.set_host_cache_limit(nbytes)


def policies():
    """The policy names Allocator and replay accept."""
    return list(_M.policies())


def fragmentation(stats, largest_free_block):
    """TensorFlow's measure: the share of free reserved memory outside the largest free block
    (0 when none is free). `stats` is a memory_stats() dict."""
    free = stats["reserved_bytes.all.current"] - stats["allocated_bytes.all.current"]
    return (free - min(free, largest_free_block)) / free if free > 0 else 0.0


# ---- traces -------------------------------------------------------------------------------------

def start_trace(path, device="sim"):
    """Writes every allocation and free of `device`'s tensors to `path` (JSON lines)."""
    _M.start_trace(str(device), str(path))


def stop_trace(device="sim"):
    _M.stop_trace(str(device))


def _events(trace, fn):
    if isinstance(trace, (str, bytes)) or hasattr(trace, "__fspath__"):
        return _M.read_trace(str(trace))
    if isinstance(trace, dict):
        return trace_from_snapshot(trace)
    if not isinstance(trace, (list, tuple)):
        raise TypeError(f"{fn}(): expected a trace path, a list of events or a snapshot dict; "
                        f"got {type(trace).__name__}")
    return list(trace)


def replay(trace, policy, capacity=80 * GiB, conf=""):
    """Replays a trace (a path, read_trace()'s events or a snapshot dict) under `policy` on a
    virtual device of `capacity` bytes: device mallocs, peaks and fragmentation (a dict)."""
    return _M.replay(_events(trace, "replay"), policy, capacity, conf)


def compare(trace, policies=("caching", "no_caching", "bfc", "bfc_growth"), capacity=80 * GiB):
    """replay() under each policy; format_replay_table() prints the list side by side."""
    events = _events(trace, "compare")
    return [_M.replay(events, p, capacity, "") for p in policies]


def timeline(trace, policy, capacity=80 * GiB, points=400):
    """Allocated and reserved bytes after each event of a replay under `policy`, thinned to about
    `points` samples (peaks kept): {"t_us", "allocated", "reserved", "peak_allocated",
    "peak_reserved", "device_mallocs"}."""
    events = _events(trace, "timeline")
    if points < 2:
        raise ValueError(f"timeline(): points must be at least 2; got {points}")
    alloc = Allocator(policy, SimulatedDevice(capacity))
    live, streams = {}, {0: 0}
    t, allocated, reserved = [], [], []
    for kind, ptr, size, stream, t_us in events:
        if kind == "alloc":
            live[ptr] = alloc.malloc(size, streams.setdefault(stream, len(streams)))
        elif ptr in live:
            alloc.free(live.pop(ptr))
        s = alloc.memory_stats()
        t.append(t_us)
        allocated.append(s["allocated_bytes.all.current"])
        reserved.append(s["reserved_bytes.all.current"])
    keep = _thin(allocated, reserved, points)
    s = alloc.memory_stats()
    return {"policy": policy, "t_us": [t[i] for i in keep],
            "allocated": [allocated[i] for i in keep], "reserved": [reserved[i] for i in keep],
            "peak_allocated": s["allocated_bytes.all.peak"],
            "peak_reserved": s["reserved_bytes.all.peak"],
            "device_mallocs": s["num_device_alloc"]}


def _thin(a, b, points):
    """Indices of about `points` evenly spaced samples, plus each series' peak, in order."""
    n = len(a)
    if n <= points:
        return list(range(n))
    keep = {round(i * (n - 1) / (points - 1)) for i in range(points)}
    keep.add(max(range(n), key=a.__getitem__))
    keep.add(max(range(n), key=b.__getitem__))
    return sorted(keep)


# ---- memory history and snapshots ---------------------------------------------------------------

class _ModulePaths:
    """nn.Module.__call__'s scope while recording: "CNN.conv1" for the module a root calls."""

    def __init__(self):
        self.local = threading.local()

    def __call__(self, module, args, kwargs):
        stack = self.local.__dict__.setdefault("stack", [])
        if stack:
            root_name, names, outer = stack[-1]
        else:  # a root: name its tree once per call
            root_name, outer = type(module).__name__, ""
            names = {id(m): n for n, m in module.named_modules()}
        name = names.get(id(module))
        if name is None:  # not in the root's tree (made during forward): under its caller
            path = outer + "." + type(module).__name__ if outer else type(module).__name__
        else:
            path = root_name + "." + name if name else root_name
        previous = _M._set_module_path(path)
        stack.append((root_name, names, path))
        try:
            return module._call_impl(*args, **kwargs)
        finally:
            stack.pop()
            _M._set_module_path(previous)


_recording = set()  # devices (and allocators) whose history records now


def _track(key, enabled):
    from wick.nn.modules import module as _module
    (_recording.add if enabled else _recording.discard)(key)
    _module._memory_scope = _ModulePaths() if _recording else None


def _check_enabled(enabled, max_entries, fn):
    if enabled not in _ENABLED:
        raise ValueError(f"{fn}(): enabled must be None, 'state' or 'all'; got {enabled!r}")
    if isinstance(max_entries, bool) or not isinstance(max_entries, int):
        raise TypeError(f"{fn}(): max_entries must be an int; got {type(max_entries).__name__}")
    if max_entries <= 0:
        raise ValueError(f"{fn}(): max_entries must be positive; got {max_entries}")
    return bool(enabled)


def _record_memory_history(enabled="all", max_entries=100000, device="sim", allocator=None):
    """Starts (enabled="all") or stops (None) recording what `device`'s allocator does - or
    `allocator`'s, an Allocator of this module - keeping the newest `max_entries` events."""
    on = _check_enabled(enabled, max_entries, "_record_memory_history")
    if allocator is not None:
        allocator._record_memory_history(on, max_entries)
        _track(id(allocator), on)
    else:
        _M._record_memory_history(str(device), on, max_entries)
        _track(str(device), on)


def _snapshot(device="sim", allocator=None):
    """Segments, blocks, the recorded history ("device_traces") and stats, as a dict."""
    text = allocator._snapshot_json() if allocator is not None else _M._snapshot_json(str(device))
    return json.loads(text)


def _dump_snapshot(filename="dump_snapshot.json", device="sim", allocator=None):
    with open(filename, "w") as f:
        json.dump(_snapshot(device, allocator), f)


_ACTIONS = {"alloc", "free", "segment_alloc", "segment_free", "oom"}


def load_snapshot(snapshot, fn="load_snapshot"):
    """A snapshot dict from a dict, a path or JSON text, checked: ValueError names what is wrong."""
    if isinstance(snapshot, dict):
        data = snapshot
    elif isinstance(snapshot, (str, bytes)) or hasattr(snapshot, "__fspath__"):
        text = str(snapshot)
        if not text.lstrip().startswith("{"):
            with open(text) as f:
                text = f.read()
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ValueError(f"{fn}(): the snapshot is not JSON ({e}): {text[:60]!r}") from None
    else:
        raise TypeError(f"{fn}(): expected a snapshot dict, a path or JSON text; "
                        f"got {type(snapshot).__name__}")
    if not isinstance(data, dict) or not isinstance(data.get("segments"), list):
        raise ValueError(f"{fn}(): a snapshot needs a 'segments' list; got {str(data)[:80]!r}")
    traces = data.get("device_traces", [[]])
    if not isinstance(traces, list) or not all(isinstance(t, list) for t in traces):
        raise ValueError(f"{fn}(): 'device_traces' must be a list of lists; got {str(traces)[:80]!r}")
    for seg in data["segments"]:
        _check_numbers(seg, ("address", "total_size"), fn, "segment")
        if not isinstance(seg.get("blocks"), list):
            raise ValueError(f"{fn}(): segment at {seg.get('address')} has no 'blocks' list")
        for block in seg["blocks"]:
            _check_numbers(block, ("address", "size"), fn, "block")
    for trace in traces:
        for entry in trace:
            _check_numbers(entry, ("addr", "size"), fn, "history entry")
            if entry.get("action") not in _ACTIONS:
                raise ValueError(f"{fn}(): unknown action {entry.get('action')!r} in {entry}")
    return data


def _check_numbers(item, keys, fn, what):
    if not isinstance(item, dict):
        raise ValueError(f"{fn}(): a {what} must be an object; got {item!r}")
    for key in keys:
        value = item.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{fn}(): {what} {key!r} must be a non-negative integer; "
                             f"got {value!r}")


def trace_from_snapshot(snapshot):
    """The snapshot's history as trace events (alloc and free), ready for replay()."""
    data = load_snapshot(snapshot, "trace_from_snapshot")
    return [(e["action"], e["addr"], e["size"], e.get("stream", 0), float(e.get("time_us", 0)))
            for e in (data["device_traces"][0] if data["device_traces"] else [])
            if e["action"] in ("alloc", "free")]


def viewer(snapshot, path, compare=("caching", "bfc_growth")):
    """Writes one self-contained HTML page drawing `snapshot` (a dict, a path or JSON text):
    memory over time by owner, the segment map at a chosen moment, and the history replayed
    under the two policies of `compare` side by side."""
    from wick import _memory_viewer
    return _memory_viewer.write(load_snapshot(snapshot, "viewer"), path, compare)
