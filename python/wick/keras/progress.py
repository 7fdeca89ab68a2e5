"""Keras's progress lines: "Epoch 1/3", then per epoch

    250/250 - 4s - loss: 0.2811 - accuracy: 0.9150 - val_loss: 0.1025 - val_accuracy: 0.9690

On a terminal the line is a bar that redraws itself while the epoch runs; in a log (stdout not a
terminal, or verbose=2) it is written once, when the epoch ends, so logs stay one line per epoch.
"""

import sys
import time

from wick.keras.callbacks import Callback


def format_value(value):
    """Keras's rule: four decimals, or scientific notation for values too small to show."""
    return f"{value:.4f}" if value == 0 or abs(value) >= 1e-3 else f"{value:.4e}"


def format_seconds(seconds):
    return f"{seconds:.0f}s" if seconds >= 1 else f"{seconds * 1000:.0f}ms"


class Progbar:
    """One progress line over `target` steps (None when the data has no len())."""

    WIDTH = 30

    def __init__(self, target, verbose=1, stream=None, interval=0.1):
        self.target = target
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        self.dynamic = verbose == 1 and bool(isatty and isatty())
        self.interval = interval
        self.start = time.monotonic()
        self.last_draw = 0.0

    def _bar(self, current):
        if self.target is None:
            return f"{current}/Unknown"
        filled = self.WIDTH * current // max(self.target, 1)
        arrow = ">" if current < self.target and filled < self.WIDTH else ""
        bar = "=" * (filled - len(arrow)) + arrow
        return f"{current}/{self.target} [{bar}{'.' * (self.WIDTH - len(bar))}]"

    def update(self, current, values):
        """A redraw after step `current` (terminal only, at most every `interval` seconds)."""
        now = time.monotonic()
        if not self.dynamic or now - self.last_draw < self.interval:
            return
        self.last_draw = now
        elapsed = now - self.start
        eta = ""
        if self.target is not None and current > 0:
            eta = f" - ETA: {format_seconds(elapsed / current * (self.target - current))}"
        metrics = "".join(f" - {k}: {format_value(v)}" for k, v in values.items())
        self.stream.write(f"\r{self._bar(current)}{eta}{metrics}\033[K")
        self.stream.flush()

    def finish(self, current, values):
        """The epoch's final line, with everything in `values` (validation included)."""
        elapsed = format_seconds(time.monotonic() - self.start)
        metrics = "".join(f" - {k}: {format_value(v)}" for k, v in values.items())
        if self.dynamic:
            self.stream.write(f"\r{self._bar(current)} - {elapsed}{metrics}\033[K\n")
        else:
            steps = f"{current}/{self.target}" if self.target is not None else f"{current}"
            self.stream.write(f"{steps} - {elapsed}{metrics}\n")
        self.stream.flush()


class ProgbarLogger(Callback):
    """What fit() adds for verbose=1 or 2: the epoch header and the progress line."""

    def __init__(self, verbose=1, stream=None):
        super().__init__()
        self.verbose = verbose
        self.stream = stream
        self.bar = None
        self.seen = 0

    def on_epoch_begin(self, epoch, logs=None):
        stream = self.stream if self.stream is not None else sys.stdout
        stream.write(f"Epoch {epoch + 1}/{self.params['epochs']}\n")
        stream.flush()
        self.bar = Progbar(self.params.get("steps"), self.verbose, self.stream)
        self.seen = 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen = batch + 1
        self.bar.update(self.seen, logs or {})

    def on_epoch_end(self, epoch, logs=None):
        self.bar.finish(self.seen, logs or {})
