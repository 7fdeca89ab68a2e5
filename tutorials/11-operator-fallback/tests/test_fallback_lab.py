"""Lab 11's graded tests: the report against wick's own fallback counters, the timer and the
with-and-without-kernel comparison of `where`, strict mode against a fallback hidden in a helper
and against every fallback of a training step, the cost model against a measured fallback, and
your sim kernel for `where` against the CPU's results and the fallback's time."""

import inspect
import time

import numpy as np
import pytest
import wick
import wick.nn as nn
import wick.nn.functional as F
from labkit import figure, impl
from wick.backends import fallback, sim

L = impl(__file__, "fallback_lab")
MISSING = fallback.missing_kernels("sim")


@pytest.fixture(autouse=True)
def clean_sim():
    """Each test starts, and leaves sim, with only its own kernels and zeroed counters. One
    thread: on a shared 2-core machine an OpenMP barrier waiting for a descheduled thread turns
    a millisecond into tens, and this lab measures copies, not parallel speed-up."""
    threads, mode = wick.get_num_threads(), fallback.mode()
    wick.set_num_threads(1)
    fallback.set_mode("silent")
    fallback.reset()
    yield
    for op in MISSING:
        sim.remove_kernel(op)
    fallback.set_mode(mode)
    fallback.reset()
    wick.set_num_threads(threads)


def cnn_step():
    """One training step of a small CNN on sim: convolution, batch norm, pooling and the loss
    have no sim kernel."""
    wick.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)).to("sim")
    x, y = wick.randn(16, 1, 16, 16).to("sim"), wick.randint(0, 10, (16,)).to("sim")

    def step():
        model.zero_grad()
        F.cross_entropy(model(x), y).backward()
    return step


def big(n=1024):
    x = wick.randn(n, n).to("sim")
    return x > 0, x, -x


def test_report_matches_wicks_counters():
    step = cnn_step()
    step()  # the first step also fills sim's caching allocator
    runs = []  # (step seconds, of them in fallbacks, copying) of 3 steps; the median is reported
    for _ in range(3):
        fallback.reset()
        start = time.perf_counter()
        step()
        stats = fallback.stats().values()
        runs.append((time.perf_counter() - start, sum(s[1] + s[2] for s in stats),
                     sum(s[1] for s in stats)))
    step_s, fallback_s, copy_s = sorted(runs)[1]
    expected = {op: s[0] for op, s in fallback.stats().items()}
    fallback.set_mode("error")  # the report must count in silent mode, then put "error" back
    report = L.fallback_report(step)
    assert fallback.mode() == "error"
    fallback.set_mode("silent")
    assert {r["op"]: r["calls"] for r in report} == expected, "counters not reset, or rows lost"
    assert set(expected) <= set(MISSING)
    totals = [r["copy_s"] + r["kernel_s"] for r in report]
    assert totals == sorted(totals, reverse=True), "the most expensive op comes first"
    for r in report:
        assert r["copy_share"] == pytest.approx(r["copy_s"] / (r["copy_s"] + r["kernel_s"]))
    figure("ops falling back in a CNN training step on sim", len(report))
    figure("CNN step on sim: time in fallbacks, of which copies",
           f"{1e3 * fallback_s:.2f} of {1e3 * step_s:.2f} ms, {100 * copy_s / fallback_s:.0f}%")
    figure("most expensive fallback", f"{report[0]['op']} ({1e3 * totals[0]:.2f} ms)")


def test_median_time_skips_the_warmup_and_the_outlier():
    delays = iter([0.1, 0.1, 0.003, 0.1, 0.003])  # 2 warm-up calls, then an outlier among 3
    calls = []

    def fn():
        calls.append(1)
        time.sleep(next(delays))
    t = L.median_time(fn, repeats=3, warmup=2)
    assert len(calls) == 5
    # Wide bounds: sleep() overshoots on a busy machine, but never reaches the 0.1 s outlier.
    assert 0.0025 <= t < 0.05, f"{t:.4f} s: the median of the 3 timed calls is about 0.003 s"


def test_where_falls_back_and_a_kernel_ends_it():
    c, x, nx = big()
    r = L.with_and_without_kernel("where", lambda: wick.where(c, x, nx), repeats=5)
    calls, copy_s, kernel_s = fallback.stats()["where"]
    assert r["calls"] == calls == 6, "1 warm-up and 5 timed calls fall back; the kernel's do not"
    assert r["copy_share"] == pytest.approx(copy_s / (copy_s + kernel_s))
    assert "where" in fallback.missing_kernels("sim"), "take the kernel away again"
    assert r["slowdown"] == pytest.approx(r["fallback_s"] / r["kernel_s"])
    # The times themselves are figures, not assertions: a busy machine may reorder them.
    figure("where 1024x1024 on sim, falling back (ms)", f"{1e3 * r['fallback_s']:.2f}")
    figure("where 1024x1024 on sim, with a kernel (ms)", f"{1e3 * r['kernel_s']:.2f}")
    figure("where: slowdown, copies' share of the fallback",
           f"{r['slowdown']:.1f}x, {100 * r['copy_share']:.0f}%")


def normalise(x):
    return wick.where(x > 0, x, wick.zeros_like(x))  # the hidden fallback


def test_strict_mode_finds_the_hidden_where():
    x = wick.randn(16).to("sim")
    found = L.first_fallback(lambda: normalise((x * 2).exp() - 1))
    assert found is not None and found[0] == "where"
    frame = found[1]
    assert frame.name == "normalise" and frame.lineno == inspect.getsourcelines(normalise)[1] + 1
    assert fallback.mode() == "silent", "put the mode back"
    assert fallback.stats() == {}, "strict mode refuses the fallback: nothing ran, nothing counted"
    assert L.first_fallback(lambda: (x * 2).exp().sum()) is None
    with pytest.raises(ValueError):
        L.first_fallback(lambda: wick.ones(2, device="sim").reshape(3))
    figure("hidden fallback found", f"{found[0]} at {frame.name}(), line {frame.lineno}")


def test_porting_order_is_every_fallback_of_a_training_step():
    step = cnn_step()
    step()
    expected = set(fallback.stats())
    order = L.porting_order(step)
    assert sorted(order) == sorted(expected)
    assert order[0] == L.first_fallback(step)[0]
    assert fallback.missing_kernels("sim") == MISSING, "take the kernels you added away again"
    figure("porting order of the CNN step", ", ".join(order))


def test_fallback_bytes_follow_the_kernel_signature():
    c, x, nx = big(64)
    assert L.fallback_bytes([c, x, nx], [x]) == 64 * 64 * (1 + 4 + 4 + 2 * 4)
    d = x.to(wick.float64)
    assert L.fallback_bytes([d], [d, c]) == d.nbytes + 2 * (d.nbytes + c.nbytes)
    assert L.fallback_bytes([], []) == 0


def test_cost_model_predicts_softmax_from_where():
    c, x, nx = big()
    where_bytes = L.fallback_bytes([c, x, nx], [x])
    report = L.fallback_report(lambda: [wick.where(c, x, nx) for _ in range(5)])
    row = next(r for r in report if r["op"] == "where")
    rate = L.seconds_per_byte(row, where_bytes)
    assert rate == pytest.approx(row["copy_s"] / 5 / where_bytes)

    def softmax():
        return wick.softmax(x, 1)
    sim.add_kernel("softmax")
    kernel_s = L.median_time(softmax, 5)
    sim.remove_kernel("softmax")
    predicted = L.predict_fallback(kernel_s, L.fallback_bytes([x], [x]), rate)
    assert predicted == pytest.approx(kernel_s + 3 * x.nbytes * rate)
    measured = L.median_time(softmax, 5)
    figure("fallback copies, effective rate (GB/s)", f"{1e-9 / rate:.2f}")
    figure("softmax 1024x1024 fallback: predicted vs measured (ms)",
           f"{1e3 * predicted:.2f} vs {1e3 * measured:.2f} (ratio {predicted / measured:.2f})")


def test_your_kernel_gives_the_cpus_results():
    L.use_my_where_kernel(True)
    assert "where" not in fallback.missing_kernels("sim")
    rng = np.random.default_rng(0)
    cases = [((5, 7), (5, 7), (5, 7), np.float32), ((3, 1), (1, 4), (), np.float64),
             ((2, 3, 4), (3, 4), (2, 1, 4), np.int64), ((6,), (6,), (6,), np.float16),
             ((4, 4), (4, 4), (1,), np.float32)]
    for shape_c, shape_a, shape_b, dtype in cases:
        cond = rng.random(shape_c) > 0.5
        a = (rng.standard_normal(shape_a) * 10).astype(dtype)
        b = (rng.standard_normal(shape_b) * 10).astype(dtype)
        if dtype == np.float32:
            a.flat[:3] = [np.inf, -np.inf, np.nan]
        ta, tb = wick.tensor(a), wick.tensor(b)
        expected = wick.where(wick.tensor(cond), ta, tb).numpy()
        got = wick.where(wick.tensor(cond).to("sim"), ta.to("sim"), tb.to("sim")).cpu().numpy()
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    t = wick.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    cond = t > 0
    strided = wick.where(cond.to("sim").t(), t.to("sim").t(), 0.5).cpu().numpy()  # views
    np.testing.assert_array_equal(strided, wick.where(cond.t(), t.t(), 0.5).numpy())
    w = t.to("sim").requires_grad_()
    wick.where(cond.to("sim"), w * 3, w).sum().backward()
    np.testing.assert_array_equal(w.grad.cpu().numpy(), np.where(cond.numpy(), 3.0, 1.0))
    assert "where" not in fallback.stats(), "your kernel ran: where did not fall back"
    L.use_my_where_kernel(False)
    assert "where" in fallback.missing_kernels("sim")


def test_your_kernel_ends_the_fallback_and_beats_it():
    c, x, nx = big()

    def fn():
        return wick.where(c, x, nx)
    fallback_s = L.median_time(fn, 5)
    sim.add_kernel("where")
    port_s = L.median_time(fn, 5)
    sim.remove_kernel("where")
    L.use_my_where_kernel(True)
    yours_s = L.median_time(fn, 5)
    report = {r["op"] for r in L.fallback_report(cnn_step())}
    L.use_my_where_kernel(False)
    assert "where" not in report and report, "where left the CNN step's fallbacks, the rest stay"
    figure("where 1024x1024 on sim: fallback, CPU kernel ported, your kernel (ms)",
           f"{1e3 * fallback_s:.2f}, {1e3 * port_s:.2f}, {1e3 * yours_s:.2f}")
