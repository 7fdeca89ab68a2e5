"""Where a batch's time went: wick.utils.data.LoaderTimeline (data/loader_timeline.h).

    timeline = LoaderTimeline()
    loader = DataLoader(dataset, batch_size=64, num_workers=2, timeline=timeline)
    for images, labels in loader:
        with loader_span("train step"):      # the training loop's own spans, on the consumer lane
            ...
    print(timeline.summary())
    timeline.write_svg("loader.svg", "MNIST, 2 workers")     # and write_chrome_trace("loader.json")

The C++ loader (built-in datasets) records its workers' spans itself: "build batch", and inside
it per example "read", "decode", "transform", then "collate"; the consumer's "wait". The Python
loader (Python datasets) records "build batch" per batch on each worker's lane - worker threads
or worker processes, which send their times with the batch - and "wait" on the consumer's. Times
come from time.perf_counter(), CLOCK_MONOTONIC, one clock for C++ and every process.
"""

import time

from wick import _C

LoaderTimeline = _C._data.LoaderTimeline

STAGES = ("wait", "build batch", "read", "decode", "transform", "collate", "pin memory",
          "to device", "train step")


class loader_span:  # noqa: N801  a context manager named like a function, as contextlib's are
    """Records the block as `stage` on the consumer lane of the loader this thread is iterating:
    a C++ loader's timeline, or the Python loader's (set while its iterator runs)."""

    _python_context = None  # (timeline, batch) while a Python loader's iterator delivers

    def __init__(self, stage):
        self.stage = stage
        self._native = _C._data.LoaderSpan(stage)

    def __enter__(self):
        self._start = time.perf_counter()
        self._native.__enter__()
        return self

    def __exit__(self, *exc):
        self._native.__exit__(*exc)
        context = loader_span._python_context
        if context is not None:
            timeline, batch = context
            timeline.record(self.stage, batch, 0, self._start, time.perf_counter())
        return False
