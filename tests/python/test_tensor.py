"""Tensors from Python: creation, dtypes, devices, metadata, conversions, printing."""

import math
import warnings

import numpy as np
import pytest

import wick
from reference import needs_torch, torch


def test_tensor_from_python_values():
    assert wick.tensor([1.0, 2.0]).dtype is wick.float32
    assert wick.tensor([1, 2]).dtype is wick.int64
    assert wick.tensor([True, False]).dtype is wick.bool
    assert wick.tensor([1, 2.5]).dtype is wick.float32
    assert wick.tensor(3.5).dim() == 0
    assert wick.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert wick.tensor([]).shape == (0,)
    assert wick.tensor([[], []]).shape == (2, 0)
    assert wick.tensor([1, 2], dtype=wick.float64).dtype is wick.float64
    assert wick.tensor(np.zeros((2, 3), np.float64)).dtype is wick.float64
    assert wick.tensor([wick.tensor(1.5), wick.tensor(2.5)]).tolist() == [1.5, 2.5]
    assert wick.tensor(2**40).item() == 2**40  # integers stay exact
    t = wick.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(ValueError):
        wick.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        wick.tensor(["a"])


def test_creation_functions():
    assert wick.zeros(2, 3).shape == (2, 3)
    assert wick.zeros((2, 3)).shape == (2, 3)
    assert wick.ones([4]).sum().item() == 4
    assert wick.full((2, 2), 7).dtype is wick.int64
    assert wick.full((2, 2), 7.0).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert wick.empty(3, dtype=wick.int32).dtype is wick.int32
    assert wick.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert wick.arange(1, 2, 0.5).tolist() == [1.0, 1.5]
    assert wick.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert wick.eye(3).sum().item() == 3
    assert wick.eye(2, 3).shape == (2, 3)
    r = wick.randint(0, 10, (100,))
    assert r.dtype is wick.int64 and 0 <= r.min().item() and r.max().item() < 10
    assert wick.randint(5, (3,)).max().item() < 5
    x = wick.randn(3, 4, dtype=wick.float64)
    for like in (wick.zeros_like, wick.ones_like, wick.empty_like, wick.rand_like,
                 wick.randn_like):
        y = like(x)
        assert y.shape == x.shape and y.dtype is wick.float64
    assert wick.full_like(x, 2).sum().item() == 24
    assert wick.zeros(2, requires_grad=True).requires_grad


def test_manual_seed_reproduces():
    wick.manual_seed(7)
    a = wick.randn(5)
    wick.manual_seed(7)
    assert wick.equal(a, wick.randn(5))
    assert not wick.equal(a, wick.randn(5))


def test_dtypes_and_devices():
    names = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]
    for name in names:
        dt = getattr(wick, name)
        assert repr(dt) == f"wick.{name}"
        assert wick.zeros(1, dtype=dt).dtype is dt
    assert wick.float is wick.float32 and wick.long is wick.int64 and wick.double is wick.float64
    assert wick.float32.is_floating_point and not wick.int64.is_floating_point
    assert wick.float64.itemsize == 8
    d = wick.device("cpu")
    assert d.type == "cpu" and d.index is None and str(d) == "cpu" and d == "cpu"
    assert repr(wick.device("cuda:1")) == "device(type='cuda', index=1)"
    assert wick.zeros(1).device == wick.device("cpu")
    with pytest.raises(ValueError):
        wick.device("tpu")


def test_metadata():
    x = wick.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and isinstance(x.shape, wick.Size) and isinstance(x.shape, tuple)
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == 3 and x.ndim == 3 and x.numel() == 24 and len(x) == 2
    assert x.stride() == (12, 4, 1) and x.stride(0) == 12
    assert x.shape.numel() == 24
    assert x.element_size() == 4 and x.nbytes == 96
    assert x.is_contiguous() and not x.transpose(0, 1).is_contiguous()
    assert x.is_floating_point()
    assert x.T.shape == (4, 3, 2)


def test_conversions():
    x = wick.tensor([1.5, -2.5])
    assert x.to(wick.int64).tolist() == [1, -2]
    assert x.to("cpu").dtype is wick.float32
    assert x.to(wick.float64).dtype is wick.float64
    assert x.to(dtype=wick.float16).dtype is wick.float16
    assert x.to(wick.zeros(1, dtype=wick.float64)).dtype is wick.float64
    assert x.double().dtype is wick.float64 and x.long().dtype is wick.int64
    assert x.int().dtype is wick.int32 and x.bool().tolist() == [True, True]
    assert x.half().float().tolist() == [1.5, -2.5]
    assert x.to(wick.float32) is not None
    assert x.cpu().tolist() == [1.5, -2.5]
    with pytest.raises(RuntimeError, match="without CUDA|CUDA"):
        x.cuda()
    assert wick.cuda.is_available() in (True, False)


def test_item_and_python_protocols():
    assert wick.tensor(2.5).item() == 2.5 and isinstance(wick.tensor(3).item(), int)
    assert isinstance(wick.tensor(True).item(), bool)
    assert float(wick.tensor([4.0])) == 4.0 and int(wick.tensor(7)) == 7
    assert [1, 2, 3][wick.tensor(1)] == 2  # __index__
    assert bool(wick.tensor([1.0])) and not bool(wick.tensor(0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(wick.tensor([1.0, 2.0]))
    with pytest.raises(ValueError):
        wick.tensor([1.0, 2.0]).item()
    assert f"{wick.tensor(3.14159):.2f}" == "3.14"
    rows = list(wick.tensor([[1, 2], [3, 4]]))
    assert len(rows) == 2 and rows[1].tolist() == [3, 4]
    with pytest.raises(TypeError):
        len(wick.tensor(1.0))
    s = {wick.zeros(1), wick.zeros(1)}
    assert len(s) == 2  # hashed by identity, as in PyTorch


@needs_torch
@pytest.mark.parametrize("make", [
    lambda m: m.tensor([[1.0, -2.5], [3.0, 4.0]]),
    lambda m: m.tensor([1, 2, 3]),
    lambda m: m.tensor([True, False]),
    lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
    lambda m: m.tensor(2.5),
    lambda m: m.arange(2000),
    lambda m: m.arange(0.0, 200.0, 0.1),
    lambda m: m.tensor([1e-5, 1e5]),
    lambda m: m.zeros(0, 3),
    lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
])
def test_repr_matches_torch(make):
    expected = repr(make(torch)).replace("torch.", "wick.").replace("MulBackward0", "MulBackward")
    assert repr(make(wick)) == expected


def test_inplace_and_version():
    x = wick.zeros(3)
    v = x._version()
    x += 1
    x *= 3
    x -= 1
    x /= 2
    assert x.tolist() == [1.0, 1.0, 1.0] and x._version() > v
    x.add_(wick.ones(3), alpha=2).sub_(1).mul_(2).div_(4)
    assert x.tolist() == [1.0, 1.0, 1.0]
    x.fill_(2).pow_(2).clamp_(max=3)
    assert x.tolist() == [3.0, 3.0, 3.0]
    x.zero_()
    assert x.sum().item() == 0
    i = wick.tensor([1, 2])
    with pytest.raises(TypeError):
        i /= 2  # float result into an int tensor
    y = x.copy_(wick.tensor([1.0, 2.0, 3.0]))
    assert y is x and x.tolist() == [1.0, 2.0, 3.0]
    assert x.exp_().log_().sqrt_().tolist() == pytest.approx([1.0, math.sqrt(2), math.sqrt(3)])


@needs_torch
@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_"])
def test_deprecated_alpha_first_overload(op):
    """add_(alpha, other), the pre-1.5 order older course code still uses, works with the same
    UserWarning as PyTorch's (which warns once per process, so only wick's is checked) and the
    same result as add_(other, alpha=alpha)."""
    values, other = [1.0, -2.0, 3.5], [0.5, 4.0, -1.0]
    results = {}
    for m in (wick, torch):
        x = m.tensor(values)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(x, op)(-0.25, m.tensor(other))
        if m is wick:
            assert any(f"overload of {op} is deprecated" in str(w.message) for w in caught)
        assert (out is x) == op.endswith("_")
        results[m.__name__] = out.tolist()
    assert results["wick"] == pytest.approx(results["torch"])
    with pytest.raises(TypeError, match=op):
        getattr(wick.tensor(values), op)(-0.25, 2.0)  # alpha first needs a tensor other
