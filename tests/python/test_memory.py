"""wick.memory: the allocator policies on a simulated device, traces and replay, memory history
with owners, snapshots, and the errors bad input gets (PyTorch's exception types, messages that
name the function and the value)."""

import json
import os
import subprocess
import sys

import pytest

import wick
import wick.nn.functional as F
from wick import memory, nn

MiB = 1 << 20


def test_policies_on_a_simulated_device():
    dev = memory.SimulatedDevice(1 << 30)
    caching = memory.Allocator("caching", dev)
    p = caching.malloc(1000)
    stats = caching.memory_stats()
    assert stats["allocated_bytes.all.current"] == 1024  # rounded to 512 bytes
    assert stats["reserved_bytes.all.current"] == 2 * MiB  # one small-pool segment
    caching.free(p)
    assert caching.largest_free_block() == 2 * MiB
    assert memory.fragmentation(caching.memory_stats(), caching.largest_free_block()) == 0.0
    caching.empty_cache()
    assert caching.memory_stats()["reserved_bytes.all.current"] == 0
    assert memory.round_size(1) == 512 and memory.segment_size(2 * MiB) == 20 * MiB

    none = memory.Allocator("no_caching", dev)
    q = none.malloc(1000)
    assert none.memory_stats()["reserved_bytes.all.current"] == 1000
    none.free(q)
    assert none.memory_stats()["num_device_free"] == 1
    assert set(memory.policies()) == {"caching", "no_caching", "bfc", "bfc_growth"}


def test_streams_delay_reuse():
    dev = memory.SimulatedDevice(1 << 30)
    a = memory.Allocator("caching", dev)
    side = dev.create_stream()
    p = a.malloc(4096)
    a.record_stream(p, side)
    dev.enqueue_work(side)
    a.free(p)
    assert a.malloc(4096) != p  # the side stream may still be reading it
    dev.finish_work(side)


def test_history_and_snapshot_of_an_allocator():
    a = memory.Allocator("caching", memory.SimulatedDevice(1 << 30))
    memory._record_memory_history("all", max_entries=100, allocator=a)
    p = a.malloc(3 * MiB)
    q = a.malloc(100)
    a.free(q)
    snap = memory._snapshot(allocator=a)
    memory._record_memory_history(None, allocator=a)
    actions = [e["action"] for e in snap["device_traces"][0]]
    assert actions == ["segment_alloc", "alloc", "segment_alloc", "alloc", "free"]
    assert snap["device_traces"][0][1]["op"] == "Allocator.malloc"  # named by the binding
    assert len(snap["segments"]) == 2
    large = [s for s in snap["segments"] if s["segment_type"] == "large"][0]
    assert large["total_size"] == 20 * MiB and large["allocated_size"] == 3 * MiB
    assert [b["state"] for b in large["blocks"]] == ["active_allocated", "inactive"]
    assert snap["stats"]["allocated_bytes.all.peak"] == 3 * MiB + 512
    assert memory.load_snapshot(json.dumps(snap))["policy"] == "caching"
    a.free(p)


def test_history_is_bounded():
    a = memory.Allocator("bfc_growth", memory.SimulatedDevice(1 << 30))
    memory._record_memory_history(max_entries=8, allocator=a)
    for i in range(20):
        a.free(a.malloc(1000 + i))
    snap = memory._snapshot(allocator=a)
    memory._record_memory_history(None, allocator=a)
    assert len(snap["device_traces"][0]) == 8
    assert snap["dropped_entries"] == 41 - 8  # one region, 20 allocs and frees


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 6 * 6, 3))

    def forward(self, x):
        return self.head(F.relu(self.conv(x)))


def test_sim_history_names_ops_and_module_paths(tmp_path):
    wick.backends.fallback.set_mode("silent")
    try:
        net = _Net().to("sim")
        memory._record_memory_history("all", device="sim")
        try:
            loss = net(wick.randn(2, 1, 8, 8, device="sim")).sum()
            loss.backward()
            memory._dump_snapshot(str(tmp_path / "snap.json"), device="sim")
        finally:
            memory._record_memory_history(None, device="sim")
    finally:
        wick.backends.fallback.set_mode("warn")
    snap = memory.load_snapshot(str(tmp_path / "snap.json"))
    owners = {(e["module"], e["op"]) for e in snap["device_traces"][0] if e["action"] == "alloc"}
    assert ("_Net.conv", "conv2d") in owners
    assert ("_Net.head.1", "linear") in owners
    assert any(op.endswith("Backward") for _, op in owners)
    # Recording is off again: modules run without the scope.
    from wick.nn.modules import module
    assert module._memory_scope is None


def test_trace_record_and_replay(tmp_path):
    path = str(tmp_path / "trace.jsonl")
    memory.start_trace(path, device="sim")
    try:
        x = wick.randn(256, 256, device="sim")
        y = (x * 2).relu()
        del x, y
    finally:
        memory.stop_trace(device="sim")
    events = memory.read_trace(path)
    assert [e[0] for e in events].count("alloc") >= 2
    results = memory.compare(path)
    assert [r["policy"] for r in results] == ["caching", "no_caching", "bfc", "bfc_growth"]
    assert all(r["peak_requested"] == results[0]["peak_requested"] for r in results)
    table = memory.format_replay_table(results)
    assert "peak reserved" in table and "bfc_growth" in table
    tl = memory.timeline(events, "caching", points=3)
    assert tl["peak_reserved"] == results[0]["peak_reserved"]
    assert max(tl["allocated"]) == tl["peak_allocated"]  # peaks survive the thinning


def test_replay_of_a_snapshot_history():
    a = memory.Allocator("caching", memory.SimulatedDevice(1 << 30))
    memory._record_memory_history(allocator=a)
    ptrs = [a.malloc(s) for s in (MiB, 3 * MiB, 5000)]
    for p in ptrs:
        a.free(p)
    snap = memory._snapshot(allocator=a)
    memory._record_memory_history(None, allocator=a)
    assert [e[0] for e in memory.trace_from_snapshot(snap)] == ["alloc"] * 3 + ["free"] * 3
    again = memory.replay(snap, "caching")
    assert again["peak_allocated"] == a.memory_stats()["allocated_bytes.all.peak"]


# ---- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("call, exc, words", [
    (lambda: memory.Allocator("lru", memory.SimulatedDevice(MiB)), ValueError, ["lru", "policy"]),
    (lambda: memory.replay([], "fifo"), ValueError, ["fifo"]),
    (lambda: memory.Allocator("caching", memory.SimulatedDevice(MiB)).malloc(-5), ValueError,
     ["Allocator.malloc", "-5"]),
    (lambda: memory.SimulatedDevice(-1), ValueError, ["SimulatedDevice", "-1"]),
    (lambda: memory.SimulatedDevice(MiB, backing="disk"), ValueError, ["disk"]),
    (lambda: memory.round_size(-3), ValueError, ["round_size", "-3"]),
    (lambda: memory.replay([("alloc", 1, -8, 0, 0.0)], "caching"), ValueError, ["replay", "-8"]),
    (lambda: memory.replay([("grab", 1, 8, 0, 0.0)], "caching"), ValueError, ["grab"]),
    (lambda: memory.replay(42, "caching"), TypeError, ["replay", "int"]),
    (lambda: memory._record_memory_history("sometimes"), ValueError, ["sometimes"]),
    (lambda: memory._record_memory_history(max_entries=0), ValueError, ["max_entries", "0"]),
    (lambda: memory._record_memory_history(max_entries="9"), TypeError, ["max_entries", "str"]),
    (lambda: memory._snapshot(device="cpu"), ValueError, ["_snapshot", "cpu"]),
    (lambda: memory.Allocator("caching", memory.SimulatedDevice(MiB)).free(12345), RuntimeError,
     ["did not allocate"]),
    (lambda: memory.Allocator("bfc", memory.SimulatedDevice(MiB)).set_memory_fraction(0.5),
     ValueError, ["set_memory_fraction", "bfc"]),
    (lambda: memory.load_snapshot('{"segments": [1, 2'), ValueError, ["load_snapshot", "not JSON"]),
    (lambda: memory.load_snapshot('{"blocks": []}'), ValueError, ["'segments'"]),
    (lambda: memory.load_snapshot({"segments": [{"address": -4, "total_size": 8, "blocks": []}]}),
     ValueError, ["address", "-4"]),
    (lambda: memory.load_snapshot({"segments": [], "device_traces": [[{"action": "alloc",
                                                                        "addr": 1, "size": -2}]]}),
     ValueError, ["size", "-2"]),
    (lambda: memory.load_snapshot({"segments": [], "device_traces": [[{"action": "steal",
                                                                        "addr": 1, "size": 2}]]}),
     ValueError, ["steal"]),
    (lambda: memory.load_snapshot(3.5), TypeError, ["load_snapshot", "float"]),
    (lambda: memory.viewer({"segments": []}, "/dev/null", compare=["caching", "lru"]), ValueError,
     ["viewer", "lru"]),
])
def test_bad_input(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value), str(info.value)


def test_a_missing_snapshot_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        memory.load_snapshot(str(tmp_path / "nothing.json"))


# Note [host block cache]: large host blocks are kept and reused, within a limit.
def test_host_cache_reuses_a_freed_block_and_honours_its_limit():
    limit = memory.host_cache_stats()["limit_bytes"]
    memory.set_host_cache_limit(64 << 20)  # on, whatever WICK_HOST_CACHE_MB says
    memory.empty_host_cache()
    before = memory.host_cache_stats()
    a = wick.ones(400_000)  # 1.6 MB: a cached size
    address = a.data_ptr()
    del a
    assert memory.host_cache_stats()["cached_bytes"] >= 1_600_000
    b = wick.zeros(400_001)  # the same size class: the same block, zeroed
    assert b.data_ptr() == address
    assert float(b.sum()) == 0.0
    assert memory.host_cache_stats()["hits"] == before["hits"] + 1
    try:
        memory.set_host_cache_limit(0)
        del b
        stats = memory.host_cache_stats()
        assert stats["cached_bytes"] == 0 and stats["given_back"] == before["given_back"] + 1
    finally:
        memory.set_host_cache_limit(limit)


def test_host_cache_rejects_a_negative_limit_and_a_bad_environment_value():
    with pytest.raises(ValueError, match="set_host_cache_limit.*-1"):
        memory.set_host_cache_limit(-1)
    code = "import wick; wick.ones(1 << 20)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path),
                                     WICK_HOST_CACHE_MB="lots"))
    assert result.returncode != 0
    assert "ValueError" in result.stderr and "WICK_HOST_CACHE_MB" in result.stderr
    assert "'lots'" in result.stderr
