"""Lab 16's graded tests: the timeline arithmetic on hand-made timelines (exact), then your fast
pipeline: the same batches as the slow one, served by the C++ loader's worker threads with no
Python left per example. How much less the training loop waits is measured and printed as
figures, not asserted: a timing would make the grade depend on the machine's load."""

import os

import pytest
import wick
from labkit import ROOT, figure, impl

L = impl(__file__, "bottleneck")
# TensorFlow's 64-digit shard, read 8 times over: 512 digits, 32 batches of 16.
SHARD = [os.path.join(ROOT, "tests", "fixtures", "tfrecord", "digits.tfrecord")] * 8
STEP = 0.0005  # seconds of simulated training per batch: less than the slow transform takes

# (stage, batch, lane, start_us, end_us): a consumer that waits, two workers.
EVENTS = [("wait", 0, 0, 0, 3000), ("train step", 0, 0, 3000, 5000),
          ("wait", 1, 0, 5000, 6000), ("train step", 1, 0, 6000, 8000),
          ("build batch", 0, 1, 0, 3000), ("decode", 0, 1, 100, 900),
          ("build batch", 1, 2, 0, 6000), ("decode", 1, 2, 200, 5200)]


def test_stage_totals_and_wall():
    assert L.stage_totals(EVENTS) == {"wait": 4.0, "train step": 4.0, "build batch": 9.0,
                                      "decode": 5.8}
    assert L.wall_ms(EVENTS) == 8.0


def test_starvation_and_busy_workers():
    assert L.starvation(EVENTS) == pytest.approx(0.5)
    assert L.worker_busy(EVENTS) == {1: pytest.approx(3 / 8), 2: pytest.approx(6 / 8)}
    built_by_consumer = [("build batch", 0, 0, 0, 1000), ("train step", 0, 0, 1000, 10000)]
    assert L.starvation(built_by_consumer) == pytest.approx(0.1)


def test_diagnose():
    assert L.diagnose(EVENTS) == "loader-bound"
    assert L.diagnose([("wait", 0, 0, 0, 50), ("train step", 0, 0, 50, 1000)]) == "balanced"
    assert L.diagnose([("wait", 0, 0, 0, 200), ("train step", 0, 0, 200, 1000)]) == "in between"


def test_the_slow_pipeline_builds_in_the_training_loop():
    dataset, kwargs = L.slow_pipeline(SHARD)
    _, events = L.run_epoch(dataset, kwargs, STEP)
    builds = [e for e in events if e[0] == "build batch"]
    assert len(builds) == 32 and all(lane == 0 for _, _, lane, _, _ in builds)
    figure("slow pipeline: training loop idle share",
           f"{L.starvation(events):.0%} ({L.diagnose(events)})")
    totals = L.stage_totals(events)
    figure("slow pipeline: build batch / train step (ms)",
           f"{totals['build batch']:.0f} / {totals['train step']:.0f}")


def test_the_fast_pipeline_gives_the_same_batches_without_starving():
    slow, slow_kwargs = L.slow_pipeline(SHARD)
    fast, fast_kwargs = L.fast_pipeline(SHARD)
    slow_batches, slow_events = L.run_epoch(slow, slow_kwargs, STEP)
    fast_batches, fast_events = L.run_epoch(fast, fast_kwargs, STEP)
    assert len(fast_batches) == len(slow_batches) == 32
    for (xs, ys), (xf, yf) in zip(slow_batches, fast_batches):
        assert wick.allclose(xs, xf, atol=1e-6) and ys.tolist() == yf.tolist()
    loader = wick.utils.data.DataLoader(fast, batch_size=16, **fast_kwargs)
    assert loader._cpp is not None, "the fast pipeline should be served by the C++ loader"
    assert fast_kwargs.get("num_workers", 0) >= 1, "build batches off the training loop"
    assert {e[2] for e in fast_events if e[0] == "build batch"} - {0}, "no worker built a batch"
    figure("fast pipeline: training loop idle share",
           f"{L.starvation(fast_events):.0%} ({L.diagnose(fast_events)})")
    figure("epoch wall time, slow / fast (ms)",
           f"{L.wall_ms(slow_events):.0f} / {L.wall_ms(fast_events):.0f}")
    busy = L.worker_busy(fast_events)
    figure("fast pipeline: worker busy shares", ", ".join(f"{v:.0%}" for v in busy.values()))
