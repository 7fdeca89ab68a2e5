"""The sim device and the CPU fallback: sim kernels give the CPU's results in place, ops without
a sim kernel fall back (counted, timed, warned once, refused in error mode), autograd and an
optimizer step work across the two, and the device's memory is the caching allocator's."""

import numpy as np
import pytest

import wick
import wick.nn as nn
import wick.nn.functional as F
from wick.backends import fallback, sim


@pytest.fixture(autouse=True)
def fresh_stats():
    fallback.reset()
    previous = fallback.mode()
    fallback.set_mode("silent")
    yield
    fallback.set_mode(previous)


def test_sim_is_a_device_with_part_of_the_kernels():
    assert sim.is_available() and sim.device_count() == 1
    assert "sim" in wick._C._backends()
    x = wick.ones(3, device="sim")
    assert x.device == wick.device("sim:0") and str(x.device) == "sim:0"
    missing = fallback.missing_kernels("sim")
    for op in ["where", "softmax", "conv2d", "max_pool2d", "batch_norm", "scatter_add"]:
        assert op in missing
    for op in ["add", "exp", "sum", "bmm", "copy", "adam_step"]:
        assert op in sim.ops_with_kernels() and op not in missing
    assert not wick.backends.mps.is_available()


def test_sim_kernels_run_without_fallback_and_match_the_cpu():
    a = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    x = wick.tensor(a).to("sim")
    y = ((x * 2 + 1).exp().sum(1) @ wick.ones(5, 3).to("sim")).cpu()
    np.testing.assert_allclose(y.numpy(), np.exp(a * 2 + 1).sum(1) @ np.ones((5, 3)), rtol=1e-5)
    assert fallback.stats() == {}


def test_an_op_without_a_sim_kernel_falls_back_and_is_counted_and_timed():
    x = wick.randn(256, 256).to("sim")
    for _ in range(3):
        out = wick.where(x > 0, x, -x)
    assert out.device.type == "sim"
    np.testing.assert_array_equal(out.cpu().numpy(), np.abs(x.cpu().numpy()))
    calls, copy_s, kernel_s = fallback.stats()["where"]
    assert calls == 3 and copy_s > 0 and kernel_s > 0
    p = wick.softmax(x, 1)
    np.testing.assert_allclose(p.sum(1).cpu().numpy(), np.ones(256), rtol=1e-5)
    assert set(fallback.stats()) == {"where", "softmax"}
    fallback.reset()
    assert fallback.stats() == {}


def test_error_mode_refuses_and_names_the_op_and_device():
    x = wick.ones(4, device="sim")
    with fallback.fallback_mode("error"):
        with pytest.raises(RuntimeError, match=r"\[where\] no sim kernel"):
            wick.where(x > 0, x, x)
        wick.exp(x)  # has a kernel: fine in error mode
    assert fallback.mode() == "silent"
    with pytest.raises(ValueError, match="'loud'"):
        fallback.set_mode("loud")


def test_warn_mode_warns_once_per_op(capfd):
    fallback.set_mode("warn")
    x = wick.ones(2, 4, device="sim")
    wick.softmax(x, 1)
    wick.softmax(x, 1)
    err = capfd.readouterr().err
    assert err.count("softmax has no sim kernel") <= 1  # once per process, maybe already shown


def test_training_step_on_sim_matches_the_cpu():
    wick.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    twin = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    twin.load_state_dict(model.state_dict())
    model.to("sim")
    x, y = wick.randn(5, 1, 8, 8), wick.tensor([0, 1, 2, 0, 1])
    losses = []
    for net, xs, ys in [(model, x.to("sim"), y.to("sim")), (twin, x, y)]:
        opt = wick.optim.Adam(net.parameters(), lr=0.01)
        loss = F.cross_entropy(net(xs), ys)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    assert losses[0] == pytest.approx(losses[1], rel=1e-6)
    for a, b in zip(model.parameters(), twin.parameters()):
        assert a.device.type == "sim"
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert "conv2d" in fallback.stats() and "conv2d_backward" in fallback.stats()


def test_sim_memory_is_the_caching_allocators():
    before = sim.memory_allocated()
    x = wick.empty(1 << 20, device="sim")  # 4 MiB
    assert sim.memory_allocated() - before >= 4 << 20
    assert sim.memory_reserved() >= sim.memory_allocated()
    del x
    assert sim.memory_allocated() == before
    assert sim.memory_reserved() > 0  # the segment stays cached, as on a GPU


def test_giving_sim_a_kernel_stops_the_fallback():
    x = wick.randn(64, 64).to("sim")
    sim.add_kernel("where")
    try:
        assert "where" not in fallback.missing_kernels("sim")
        wick.where(x > 0, x, -x)
        assert "where" not in fallback.stats()
    finally:
        sim.remove_kernel("where")
    wick.where(x > 0, x, -x)
    assert fallback.stats()["where"][0] == 1
    with pytest.raises(ValueError, match="'wher'"):
        sim.add_kernel("wher")
