"""Note [freed storage] (core/storage.h), which FSDP relies on, and the CPU allocator's counters
that its memory accounting reads. The multi-rank FSDP tests are tests/distributed/."""

import numpy as np
import pytest
import wick
from wick import memory
from wick.distributed.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy


def test_freed_storage_refuses_reads_and_views_see_new_bytes():
    full = wick.arange(6.0)
    view = full[2:5]
    full._free_storage()
    assert full._is_storage_freed() and view._is_storage_freed()
    with pytest.raises(RuntimeError, match="freed"):
        view.sum()
    with pytest.raises(RuntimeError, match="freed"):
        full.tolist()
    full._alloc_storage()
    full.copy_(wick.full((6,), 7.0))
    assert view.tolist() == [7.0, 7.0, 7.0]  # the same storage object, new bytes


def test_saved_tensors_see_refilled_storage():
    weight = wick.ones(3)
    leaf = weight[:].view(3).requires_grad_(True)
    x = wick.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x * leaf).sum()  # saves leaf for x's gradient
    weight._free_storage()
    weight._alloc_storage()
    # FSDP refills by a collective, which writes the bytes without an in-place op, so the
    # version autograd saved stays valid; NumPy's view of the storage writes the same way.
    weight.numpy()[:] = [10.0, 20.0, 30.0]
    loss.backward()
    assert x.grad.tolist() == [10.0, 20.0, 30.0]


def test_only_owned_storage_can_be_freed():
    borrowed = wick.from_numpy(np.ones(4, dtype=np.float32))
    with pytest.raises(RuntimeError, match="borrows"):
        borrowed._free_storage()
    assert borrowed.tolist() == [1.0] * 4


def test_freeing_twice_and_allocating_twice_are_harmless():
    t = wick.zeros(10)
    t._free_storage()
    t._free_storage()
    t._alloc_storage()
    t._alloc_storage()
    t.fill_(2.0)
    assert float(t.sum()) == 20.0


def test_cpu_memory_stats_count_and_free():
    before = memory.cpu_memory_stats()
    t = wick.empty(1 << 18)  # 1 MiB of float32
    after = memory.cpu_memory_stats()
    assert after["allocated_bytes"] - before["allocated_bytes"] >= 1 << 20
    memory.cpu_reset_peak_memory_stats()
    t._free_storage()
    assert memory.cpu_memory_stats()["allocated_bytes"] <= after["allocated_bytes"] - (1 << 20)
    assert memory.cpu_memory_stats()["peak_allocated_bytes"] >= after["allocated_bytes"]


def test_wrap_policies():
    policy = ModuleWrapPolicy({wick.nn.Linear})
    assert policy(wick.nn.Linear(2, 2), recurse=False)
    assert not policy(wick.nn.ReLU(), recurse=False)
    assert policy(wick.nn.ReLU(), recurse=True)
    assert size_based_auto_wrap_policy(None, False, 150, min_num_params=100)
    assert not size_based_auto_wrap_policy(None, False, 50, min_num_params=100)
    with pytest.raises(TypeError, match="module_classes"):
        ModuleWrapPolicy(["Linear"])
