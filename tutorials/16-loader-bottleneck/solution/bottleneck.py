"""Lab 16: find a data-loading bottleneck from the loader's timeline, then fix it.

The timeline (wick.utils.data.LoaderTimeline) holds events (stage, batch, lane, start_us, end_us):
lane 0 is the consumer - the training loop - and lane w + 1 is worker w. The consumer records
"wait" (blocked for a batch), "build batch" (when it builds batches itself, with no workers) and
the loop's own "train step"; workers record "build batch" and, inside it, per example "read",
"decode" and "transform", then "collate"."""

import wick
from wick import records
from wick.utils.data import DataLoader, Dataset

MEAN, STD = 0.1307, 0.3081  # MNIST's pixel mean and standard deviation


def stage_totals(events):
    """{stage: total milliseconds} over every lane."""
    # BEGIN SOLUTION: sum (end_us - start_us) / 1000 per stage
    totals = {}
    for stage, _, _, start, end in events:
        totals[stage] = totals.get(stage, 0.0) + (end - start) / 1000.0
    return totals
    # END SOLUTION


def wall_ms(events):
    """Milliseconds from the first event's start to the last event's end."""
    # BEGIN SOLUTION: max end - min start, in ms
    return (max(e[4] for e in events) - min(e[3] for e in events)) / 1000.0
    # END SOLUTION


def starvation(events):
    """The share of the wall time the training loop spent not training: its "wait" spans and the
    batches it built itself ("build batch" on lane 0)."""
    # BEGIN SOLUTION: sum of lane-0 "wait" and "build batch" durations, over wall_ms(events)
    idle = sum(end - start for stage, _, lane, start, end in events
               if lane == 0 and stage in ("wait", "build batch")) / 1000.0
    return idle / wall_ms(events)
    # END SOLUTION


def worker_busy(events):
    """{worker lane: share of the wall time it spent building batches} (lanes >= 1 only)."""
    # BEGIN SOLUTION: per lane >= 1, the sum of its "build batch" spans over wall_ms(events)
    busy = {}
    for stage, _, lane, start, end in events:
        if lane >= 1 and stage == "build batch":
            busy[lane] = busy.get(lane, 0.0) + (end - start) / 1000.0
    wall = wall_ms(events)
    return {lane: ms / wall for lane, ms in busy.items()}
    # END SOLUTION


def diagnose(events):
    """"loader-bound" when the loop spends over 30% of the time not training, "balanced" under
    10%, "in between" otherwise."""
    # BEGIN SOLUTION: thresholds 0.3 and 0.1 on starvation(events)
    s = starvation(events)
    if s > 0.3:
        return "loader-bound"
    return "balanced" if s < 0.1 else "in between"
    # END SOLUTION


class SlowNormalize:
    """The bottleneck to find: (x - MEAN) / STD one pixel at a time in Python. It holds the GIL,
    so worker threads cannot run it in parallel."""

    def __call__(self, image):
        values = image.flatten().tolist()
        return wick.tensor([(v - MEAN) / STD for v in values]).reshape(image.shape)


class WithPythonTransform(Dataset):
    def __init__(self, inner, transform):
        self.inner, self.transform = inner, transform

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, i):
        image, label = self.inner[i]
        return self.transform(image), label


def slow_pipeline(shard):
    """The pipeline as found: a Python per-pixel transform, batches built in the training loop."""
    dataset = WithPythonTransform(records.TFRecordImageDataset(shard, (1, 28, 28)), SlowNormalize())
    return dataset, dict(num_workers=0)


def fast_pipeline(shard):
    """Your fix: the same batches (same digits, same order, same normalisation to 1e-6), with the
    training loop no longer starved. (dataset, DataLoader keyword arguments)."""
    # BEGIN SOLUTION: a C++ transform (wick.transforms.Normalize) inside TFRecordImageDataset, served by the C++ loader's threads: num_workers=2
    transform = wick.transforms.Normalize((MEAN,), (STD,))
    return records.TFRecordImageDataset(shard, (1, 28, 28), transform=transform), dict(num_workers=2)
    # END SOLUTION


def run_epoch(dataset, loader_kwargs, step_seconds, batch_size=16):
    """One epoch with a simulated training step of `step_seconds`; (batches, timeline events)."""
    import time

    from wick.utils.data import LoaderTimeline, loader_span

    timeline = LoaderTimeline()
    loader = DataLoader(dataset, batch_size=batch_size, timeline=timeline, **loader_kwargs)
    batches = []
    for images, labels in loader:
        with loader_span("train step"):
            time.sleep(step_seconds)
        batches.append((images, labels))
    return batches, timeline.events()
