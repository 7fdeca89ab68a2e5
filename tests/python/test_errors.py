"""Errors from Python are Python exceptions with wick's messages - ValueError for bad values and
shapes, IndexError for bad indices and dims, TypeError for dtypes and wrong argument types,
RuntimeError for misuse of state, wick.OutOfMemoryError for memory - and nothing a user passes
crashes the interpreter."""

import pytest

import wick
import wick.nn.functional as F


def test_exception_types():
    with pytest.raises(ValueError, match=r"\[matmul\] inner dimensions differ"):
        wick.zeros(2, 3) @ wick.zeros(4, 5)
    with pytest.raises(ValueError, match="broadcast"):
        wick.zeros(2, 3) + wick.zeros(4)
    with pytest.raises(IndexError):
        wick.zeros(2).sum(3)
    with pytest.raises(IndexError):
        wick.zeros(2, 2).transpose(0, 5)
    with pytest.raises(TypeError):
        wick.zeros(2, dtype=wick.int64).requires_grad_()
    with pytest.raises(TypeError):
        F.cross_entropy(wick.zeros(2, 3), wick.zeros(2, dtype=wick.bool))
    with pytest.raises(RuntimeError):
        wick.ones(2).sum().backward()  # nothing requires grad
    assert issubclass(wick.OutOfMemoryError, RuntimeError)


def test_out_of_memory():
    with pytest.raises((wick.OutOfMemoryError, ValueError)):
        wick.empty(2**40, 2**20)
    with pytest.raises(wick.OutOfMemoryError):
        wick.empty(2**38)


@pytest.mark.parametrize("call", [
    lambda: wick.zeros(None),
    lambda: wick.zeros(-1),
    lambda: wick.zeros("3"),
    lambda: wick.zeros(1, 2, 3, 4, 5, 6, 7, 8, 9),
    lambda: wick.zeros(2**62, 2**62),
    lambda: wick.ones(2) + None,
    lambda: wick.ones(2) + "a",
    lambda: wick.ones(2) * [1, 2],
    lambda: wick.matmul(None, wick.ones(2)),
    lambda: wick.ones(2).add(object()),
    lambda: wick.cat([wick.ones(2), None]),
    lambda: wick.cat([]),
    lambda: wick.stack([wick.ones(2), wick.ones(3)]),
    lambda: wick.ones(2).reshape(3),
    lambda: wick.ones(2).view(-1, -1),
    lambda: wick.ones(2, 3).permute(0),
    lambda: wick.ones(2).to("gpu"),
    lambda: wick.ones(2).to(5.5),
    lambda: wick.tensor(object()),
    lambda: wick.tensor([[1], [2, 3]]),
    lambda: wick.ones(2).sum(dim="x"),
    lambda: wick.ones(2)[None, None, None, None, None, None, None, None],
    lambda: wick.ones(2).expand(3),
    lambda: wick.ones(3).index_select(0, wick.tensor([5])),
    lambda: wick.ones(3).gather(0, wick.tensor([[0]])),
    lambda: F.linear(wick.ones(2, 3), wick.ones(4, 5)),
    lambda: F.conv2d(wick.ones(1, 2, 5, 5), wick.ones(3, 4, 3, 3)),
    lambda: F.conv2d(wick.ones(5), wick.ones(3, 4, 3, 3)),
    lambda: F.max_pool2d(wick.ones(1, 1, 2, 2), 5),
    lambda: F.mse_loss(wick.ones(2), wick.ones(3)),
    lambda: F.cross_entropy(wick.ones(2, 3), wick.tensor([0, 7])),
    lambda: F.one_hot(wick.tensor([-1])),
    lambda: F.softmax(wick.ones(2), 3),
    lambda: F.layer_norm(wick.ones(2, 3), (4,)),
    lambda: F.batch_norm(wick.ones(2, 3), wick.ones(4), wick.ones(4)),
    lambda: F.dropout(wick.ones(2), 1.5),
    lambda: wick.nn.Linear(2, 2)(wick.ones(3, 3)),
    lambda: wick.nn.BatchNorm2d(3)(wick.ones(2, 3)),
    lambda: wick.optim.SGD([wick.ones(2)], lr="fast"),
    lambda: wick.from_numpy([1, 2]),
    lambda: wick.autograd.grad(wick.ones(1), [wick.ones(1)]),
    lambda: wick.ones(2).backward(),
    lambda: wick.ones(2, requires_grad=True).backward(wick.ones(3)),
    lambda: wick.Tensor(None),
    lambda: wick.ones(2).__getitem__(wick.ones(2)),
    lambda: wick.ones(2).clamp(),
    lambda: wick.linspace(0, 1, -2),
    lambda: wick.randint(5, 2, (3,)),
    lambda: wick.arange(0, 10, 0),
    lambda: wick.eye(-1),
    lambda: wick.ones(2).split(0),
    lambda: wick.ones(2).chunk(0),
    lambda: wick.ones(2).narrow(0, 1, 5),
    lambda: wick.ones(2).as_strided((5,), (1,)),
    lambda: wick.nn.Embedding(3, 2)(wick.tensor([3])),
    lambda: wick.load(None),
])
def test_bad_input_raises_instead_of_crashing(call):
    with pytest.raises((ValueError, IndexError, TypeError, RuntimeError)):
        call()


def test_messages_name_the_op():
    with pytest.raises(IndexError, match=r"\[select\]"):
        wick.zeros(2)[5]
    with pytest.raises(ValueError, match=r"\[reshape\]|\[view\]"):
        wick.zeros(2).reshape(3)
