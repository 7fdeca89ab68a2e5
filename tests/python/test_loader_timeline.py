"""wick.utils.data.LoaderTimeline: where each batch's time went, from the C++ loader (built-in
datasets: per-example read/decode spans from its worker threads) and the Python loader (Python
datasets: build batch per worker, wait per batch), with the training loop's own loader_span()s
on the consumer lane; written as a Chrome trace and an SVG."""

import collections
import json
import os
import time

import pytest

import wick
from wick import records
from wick.utils.data import DataLoader, Dataset, LoaderTimeline, loader_span

DIGITS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
                      "tfrecord", "digits.tfrecord")


class Slow(Dataset):
    def __len__(self):
        return 24

    def __getitem__(self, i):
        time.sleep(0.001)
        return wick.tensor([float(i)]), i


def counts(timeline):
    return collections.Counter(stage for stage, *_ in timeline.events())


@pytest.mark.parametrize("workers", [0, 2])
def test_cpp_loader_records_every_stage(workers, tmp_path):
    timeline = LoaderTimeline()
    ds = records.TFRecordImageDataset(DIGITS, shape=(1, 28, 28))
    loader = DataLoader(ds, batch_size=16, num_workers=workers, timeline=timeline)
    for _ in loader:
        with loader_span("train step"):
            time.sleep(0.002)
    c = counts(timeline)
    assert c["read"] == 64 and c["decode"] == 64 and c["build batch"] == 4 and c["collate"] == 4
    assert c["train step"] == 4 and c["wait"] == (4 if workers else 0)
    lanes = {stage: lane for stage, _, lane, _, _ in timeline.events()}
    assert lanes["train step"] == 0 and (lanes["decode"] >= 1) == bool(workers)
    timeline.write_chrome_trace(str(tmp_path / "t.json"))
    timeline.write_svg(str(tmp_path / "t.svg"), "digits")
    events = json.load(open(tmp_path / "t.json"))["traceEvents"]
    assert sum(e.get("name") == "decode" for e in events) == 64
    assert (tmp_path / "t.svg").read_text().startswith("<svg")
    assert "decode" in timeline.summary()


@pytest.mark.parametrize("workers", [0, 2])
def test_python_loader_records_batches_and_waits(workers):
    timeline = LoaderTimeline()
    for number, _ in enumerate(DataLoader(Slow(), batch_size=4, num_workers=workers,
                                          timeline=timeline)):
        with loader_span("train step"):
            pass
    c = counts(timeline)
    assert c["build batch"] == 6 and c["train step"] == 6 and c["wait"] == (6 if workers else 0)
    builds = [e for e in timeline.events() if e[0] == "build batch"]
    assert sorted(b for _, b, *_ in builds) == list(range(6))
    assert all(start <= end for *_, start, end in timeline.events())
    assert all(end - start >= 0.003 * 1e6 for *_, start, end in builds)  # 4 sleeps of 1 ms
    with loader_span("outside"):  # after the epoch: recorded nowhere
        pass
    assert counts(timeline)["outside"] == 0


def test_bad_timeline_argument_and_cap():
    with pytest.raises(TypeError, match="timeline must be a wick.utils.data.LoaderTimeline"):
        DataLoader(Slow(), timeline="yes")
    small = LoaderTimeline(3)
    list(DataLoader(Slow(), batch_size=2, timeline=small))
    assert len(small.events()) == 3 and small.dropped == 9


def test_train_mnist_py_writes_the_first_epochs_timeline(tmp_path):
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run(
        [sys.executable, os.path.join(root, "examples", "train_mnist.py"), "--model", "mlp",
         "--epochs", "2", "--steps-per-epoch", "12", "--loader-timeline",
         str(tmp_path / "loader.json"), "--metrics", str(tmp_path / "m.csv")],
        capture_output=True, text=True, timeout=300, cwd=root,
        env=dict(os.environ, WICK_BUILD_DIR=os.environ.get("WICK_BUILD_DIR", "build")))
    assert out.returncode == 0, out.stderr
    assert "loader timeline of epoch 1" in out.stdout
    events = json.load(open(tmp_path / "loader.json"))["traceEvents"]
    assert sum(e.get("name") == "train step" for e in events) == 12  # epoch 1 only
    assert (tmp_path / "loader.svg").read_text().startswith("<svg")


def test_worker_processes_send_their_build_spans():
    timeline = LoaderTimeline()
    loader = DataLoader(Slow(), batch_size=4, num_workers=2, multiprocessing_context="fork",
                        timeline=timeline)
    for _ in loader:
        with loader_span("train step"):
            pass
    builds = [e for e in timeline.events() if e[0] == "build batch"]
    assert sorted(b for _, b, *_ in builds) == list(range(6))
    assert {lane for _, _, lane, _, _ in builds} == {1, 2}  # worker w on lane w + 1
    assert all(end - start >= 0.003 * 1e6 for *_, start, end in builds)
    assert counts(timeline)["wait"] == 6 and counts(timeline)["train step"] == 6
    # The processes' clock is the parent's: every build starts within the epoch.
    waits = [e for e in timeline.events() if e[0] == "wait"]
    assert min(s for *_, s, _ in builds) >= min(s for *_, s, _ in waits) - 1e6
