"""Zero-copy exchange with NumPy and DLPack (PyTorch, NumPy): the memory is shared, and the owner
stays alive as long as the other side needs it."""

import gc

import numpy as np
import pytest

import wick
from reference import needs_torch, torch


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = wick.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data and t.dtype is wick.float32 and t.shape == (2, 3)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 2] = -1
    assert a[1, 2] == -1


def test_from_numpy_keeps_the_array_alive():
    t = wick.from_numpy(np.arange(1000, dtype=np.float64))
    gc.collect()
    assert t.sum().item() == sum(range(1000))


def test_from_numpy_strided_and_dtypes():
    a = np.arange(24, dtype=np.int64).reshape(4, 6)[::2, 1::2]
    t = wick.from_numpy(a)
    assert t.tolist() == a.tolist() and not t.is_contiguous()
    for dt, wdt in [(np.float16, wick.float16), (np.int32, wick.int32), (np.uint8, wick.uint8),
                    (np.bool_, wick.bool), (np.float64, wick.float64)]:
        assert wick.from_numpy(np.zeros(3, dt)).dtype is wdt
    with pytest.raises(TypeError):
        wick.from_numpy(np.zeros(3, np.int16))
    with pytest.raises(ValueError, match="negative"):
        wick.from_numpy(np.arange(4.0)[::-1])


def test_numpy_shares_memory_and_keeps_storage_alive():
    t = wick.arange(6.0).reshape(2, 3)
    a = t.numpy()
    assert a.ctypes.data == t.data_ptr()
    a[0, 1] = 9
    assert t[0, 1].item() == 9
    del t
    gc.collect()
    assert a[0, 1] == 9 and a.sum() == 23  # the array holds the storage
    v = wick.arange(12.0).reshape(3, 4).t().numpy()
    assert v.tolist() == np.arange(12.0).reshape(3, 4).T.tolist()
    with pytest.raises(RuntimeError, match="requires grad"):
        wick.zeros(2, requires_grad=True).numpy()
    assert wick.zeros(2, requires_grad=True).detach().numpy().shape == (2,)
    with pytest.raises(TypeError):
        wick.zeros(2, dtype=wick.bfloat16).numpy()
    assert np.asarray(wick.ones(3)).tolist() == [1.0, 1.0, 1.0]


def test_as_tensor_shares_numpy_memory():
    a = np.ones(4, np.float32)
    t = wick.as_tensor(a)
    assert t.data_ptr() == a.ctypes.data
    assert wick.tensor(a).data_ptr() != a.ctypes.data  # tensor() copies


@needs_torch
def test_dlpack_to_and_from_torch():
    w = wick.arange(12.0).reshape(3, 4)[:, 1:]
    t = torch.from_dlpack(w)
    assert t.data_ptr() == w.data_ptr() and t.tolist() == w.tolist()
    t[0, 0] = 100
    assert w[0, 0].item() == 100
    src = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    back = wick.from_dlpack(src)
    assert back.dtype is wick.int32 and back.data_ptr() == src.data_ptr()
    src[1, 1] = -5
    assert back[1, 1].item() == -5
    del src
    gc.collect()
    assert back.sum().item() == 0 + 1 + 2 + 3 - 5 + 5
    cap = torch.utils.dlpack.to_dlpack(torch.ones(2, dtype=torch.float64))
    assert wick.from_dlpack(cap).tolist() == [1.0, 1.0]
    assert w.__dlpack_device__() == (1, 0)


def test_dlpack_with_numpy():
    a = np.arange(5.0)
    t = wick.from_dlpack(a)
    assert t.data_ptr() == a.ctypes.data
    del a
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    w = wick.arange(4, dtype=wick.int32)
    b = np.from_dlpack(w)
    assert b.ctypes.data == w.data_ptr() and b.tolist() == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="requires grad"):
        wick.zeros(1, requires_grad=True).__dlpack__()
    with pytest.raises(TypeError):
        wick.from_dlpack(3)


def test_numpy_scalars_times_tensors_stay_tensors():
    # As in PyTorch: NumPy defers to the tensor (__array_priority__), so a learning rate read
    # from a NumPy array does not turn the update into an ndarray.
    for result in (np.float64(2.0) * wick.ones(2), np.float32(3.0) + wick.ones(2),
                   wick.ones(2) * np.float64(2.0)):
        assert isinstance(result, wick.Tensor)
    np.testing.assert_allclose((np.float64(2.0) * wick.ones(2)).numpy(), [2.0, 2.0])
