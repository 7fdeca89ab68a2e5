"""wick.autocast and wick.amp.GradScaler from Python: the dtype each op runs in, nesting, the
decorator, the debug record, and loss scaling through an optimizer."""

import math

import pytest

import wick
import wick.nn as nn
import wick.nn.functional as F
from reference import needs_torch, torch


def test_lower_precision_and_float32_ops():
    x = wick.randn(4, 8)
    w = wick.randn(6, 8, requires_grad=True)
    with wick.autocast("cpu", dtype=wick.bfloat16):
        h = F.linear(x, w)
        assert h.dtype == wick.bfloat16
        assert (x @ w.t()).dtype == wick.bfloat16
        assert F.conv2d(wick.randn(1, 3, 6, 6), wick.randn(2, 3, 3, 3)).dtype == wick.bfloat16
        for out in (F.softmax(h, 1), F.log_softmax(h, 1), h.exp(), h.sum(), h.mean(),
                    F.layer_norm(h, (6,)), F.cross_entropy(h, wick.tensor([0, 1, 2, 3])),
                    F.mse_loss(h, h.detach())):
            assert out.dtype == wick.float32
        assert F.relu(h).dtype == wick.bfloat16  # everything else follows its inputs
    assert (x @ w.t()).dtype == wick.float32
    assert not wick.amp.is_autocast_enabled("cpu")


def test_nesting_decorator_and_float16():
    a, b = wick.randn(2, 3), wick.randn(3, 2)

    @wick.autocast("cpu", dtype=wick.float16)
    def half_matmul():
        return a @ b

    with wick.autocast("cpu"):
        assert wick.amp.get_autocast_dtype("cpu") == wick.bfloat16
        with wick.autocast("cpu", enabled=False):
            assert (a @ b).dtype == wick.float32
            assert half_matmul().dtype == wick.float16
        assert (a @ b).dtype == wick.bfloat16
    with pytest.raises(ValueError):
        with wick.autocast("tpu"):
            pass


def test_record_of_dtypes():
    with wick.amp.record_dtypes() as record:
        with wick.autocast("cpu"):
            F.log_softmax(wick.randn(2, 3) @ wick.randn(3, 4), 1)
    ran = dict(record.ops)
    assert ran["bmm"] == wick.bfloat16
    assert ran["log_softmax"] == wick.float32


def test_grad_scaler_backs_off_and_grows():
    model = nn.Linear(4, 2)
    opt = wick.optim.SGD(model.parameters(), lr=0.1)
    scaler = wick.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    x = wick.randn(3, 4)
    before = model.weight.detach().clone()
    scaler.scale(model(x).sum()).backward()
    model.weight.grad[0, 0] = math.inf  # an overflow
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 4.0 and scaler.skipped_steps == 1
    assert (model.weight == before).all().item()
    for _ in range(2):
        opt.zero_grad()
        scaler.scale(model(x).sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 8.0
    assert not (model.weight == before).all().item()
    state = scaler.state_dict()
    restored = wick.amp.GradScaler("cpu")
    restored.load_state_dict(state)
    assert restored.get_scale() == 8.0


@needs_torch
def test_unscaled_gradients_match_torch():
    for framework in (wick, torch):
        framework.manual_seed(0)
    w = wick.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    tw = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = [[1.0, 2.0], [3.0, -1.0]]
    for lib, weight in ((wick, w), (torch, tw)):
        opt = lib.optim.SGD([weight], lr=0.1)
        scaler = (wick.amp.GradScaler(enabled=False) if lib is wick
                  else torch.cuda.amp.GradScaler(enabled=False))
        loss = (lib.tensor(x) @ weight).pow(2).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(opt) if lib is wick else None
        scaler.step(opt)
        scaler.update()
    assert wick.tensor(tw.detach().numpy()).sub(w.detach()).abs().max().item() < 1e-5


def test_grad_scaler_takes_the_device_first():
    """torch.amp.GradScaler's signature (device, init_scale, ...); the older init-scale-first form
    is wick.cuda.amp.GradScaler, as torch.cuda.amp.GradScaler is."""
    cpu = wick.amp.GradScaler("cpu", 8.0, growth_interval=3)
    assert cpu.device == "cpu" and cpu.is_enabled() and cpu.get_scale() == 8.0
    assert wick.amp.GradScaler(wick.device("cpu"), init_scale=4.0).get_scale() == 4.0
    with pytest.raises(TypeError, match=r"GradScaler\(\): device must be 'cpu' or 'cuda', got 8.0"):
        wick.amp.GradScaler(8.0)
    with pytest.raises(TypeError, match="'tpu'"):
        wick.amp.GradScaler("tpu")
    if not wick.cuda.is_available():
        with pytest.warns(UserWarning, match="not available"):
            off = wick.amp.GradScaler()
        assert not off.is_enabled() and off.get_scale() == 1.0
        with pytest.warns(UserWarning):
            old = wick.cuda.amp.GradScaler(init_scale=16.0)
        assert not old.is_enabled()
    import wick.cuda.amp as cuda_amp
    assert cuda_amp.GradScaler is wick.cuda.amp.GradScaler
    assert wick.cuda.amp.autocast().device_type == "cuda"
