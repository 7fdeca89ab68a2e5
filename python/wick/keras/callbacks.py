"""Callbacks of wick.keras.Model.fit, with Keras's names, arguments and behaviour.

fit() calls every callback's hooks in the order given, then History's, then the progress line's,
so a callback that adds to `logs` at the end of an epoch (LearningRateScheduler adds
"learning_rate") is seen by all of them. As in Keras, the `epoch` the hooks receive counts from 0,
while the progress line ("Epoch 1/3") and ModelCheckpoint's "{epoch}" count from 1. A callback
sets `self.model.stop_training = True` to end training after the current epoch.
"""

import csv
import math
import numbers
import os
import warnings

from wick import serialization


class Callback:
    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    # on_batch_* are Keras's older names for on_train_batch_*; overriding either works.
    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs)


class CallbackList:
    """Calls one hook on every callback, in order."""

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks)
        for c in self.callbacks:
            c.set_model(model)
            c.set_params(params)

    def __getattr__(self, hook):
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        def call(*args):
            for c in self.callbacks:
                getattr(c, hook)(*args)
        return call


class History(Callback):
    """The per-epoch logs: history.history["val_loss"][i] is epoch i's validation loss."""

    def __init__(self):
        super().__init__()
        self.epoch = []
        self.history = {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


def _check_mode(owner, mode, monitor):
    """"min" or "max" for `mode`; "auto" means max for accuracies, min for everything else."""
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"[{owner}] mode must be 'auto', 'min' or 'max'; got {mode!r}")
    if mode == "auto":
        return "max" if monitor.endswith(("acc", "accuracy")) else "min"
    return mode


def _monitored(owner, monitor, logs):
    """logs[monitor], or None with a warning naming what the logs do have (as Keras does)."""
    value = (logs or {}).get(monitor)
    if value is None:
        warnings.warn(f"[{owner}] the metric '{monitor}' is not in the logs, which have: "
                      f"{', '.join(sorted(logs or {})) or 'nothing'}; is validation_data "
                      f"missing?", RuntimeWarning, stacklevel=3)
    return value


def _snapshot(module):
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


class EarlyStopping(Callback):
    """Stops training once `monitor` has not improved by more than min_delta for `patience`
    epochs; restore_best_weights puts back the weights of the best epoch at the end of training.
    Epochs before start_from_epoch are not watched (a warm-up)."""

    def __init__(self, monitor="val_loss", min_delta=0.0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        for name, value in (("patience", patience), ("start_from_epoch", start_from_epoch)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"[EarlyStopping] {name} must be an int >= 0; got {value!r}")
        if isinstance(min_delta, bool) or not isinstance(min_delta, numbers.Real):
            raise TypeError(f"[EarlyStopping] min_delta must be a number; got {min_delta!r}")
        self.monitor = monitor
        self.mode = _check_mode("EarlyStopping", mode, monitor)
        self.min_delta = abs(min_delta)
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch

    def _improved(self, current, reference):
        if reference is None:
            return True
        if self.mode == "min":
            return current + self.min_delta < reference
        return current - self.min_delta > reference

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_epoch = 0
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        current = _monitored("EarlyStopping", self.monitor, logs)
        if current is None or epoch < self.start_from_epoch:
            return
        self.wait += 1
        if self._improved(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = _snapshot(self.model.module)
            if self.baseline is None or self._improved(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.module.load_state_dict(self.best_weights)


class ModelCheckpoint(Callback):
    """Saves the model after every epoch with wick.save, to filepath formatted with the 1-based
    epoch and the logs ("ckpt-{epoch:02d}-{val_loss:.3f}.safetensors"). save_best_only saves only
    when `monitor` improves. save_weights_only=True saves module.state_dict() (load it with
    module.load_state_dict(wick.load(path))); False saves {"model", "optimizer", "epoch"}, the
    training checkpoint examples/train_mnist.py --resume reads."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=True, mode="auto"):
        super().__init__()
        if not isinstance(filepath, (str, os.PathLike)):
            raise TypeError(f"[ModelCheckpoint] filepath must be a path; got "
                            f"{type(filepath).__name__}")
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = _check_mode("ModelCheckpoint", mode, monitor)
        self.best = None

    def _path(self, epoch, logs):
        try:
            return self.filepath.format(epoch=epoch + 1, **(logs or {}))
        except (KeyError, IndexError, ValueError) as e:
            raise KeyError(f"[ModelCheckpoint] cannot format filepath '{self.filepath}' with "
                           f"epoch and the logs ({', '.join(sorted(logs or {}))}): {e}") from None

    def on_epoch_end(self, epoch, logs=None):
        if self.save_best_only:
            current = _monitored("ModelCheckpoint", self.monitor, logs)
            if current is None:
                return
            better = (self.best is None or (current < self.best if self.mode == "min"
                                            else current > self.best))
            if not better:
                return
            self.best = current
        path = self._path(epoch, logs)
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        module = self.model.module
        if self.save_weights_only:
            serialization.save(module.state_dict(), path)
        else:
            serialization.save({"model": module.state_dict(),
                                "optimizer": self.model.optimizer.state_dict(),
                                "epoch": epoch + 1}, path)
        if self.verbose > 0:
            print(f"Epoch {epoch + 1}: saved the model to {path}")


class CSVLogger(Callback):
    """Writes one row per epoch: "epoch" (from 0, as Keras) and every log, in sorted order."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        if not isinstance(filename, (str, os.PathLike)):
            raise TypeError(f"[CSVLogger] filename must be a path; got {type(filename).__name__}")
        self.filename = os.fspath(filename)
        self.separator = separator
        self.append = append
        self.keys = None
        self.file = None

    def on_train_begin(self, logs=None):
        folder = os.path.dirname(self.filename)
        if folder:
            os.makedirs(folder, exist_ok=True)
        has_rows = self.append and os.path.exists(self.filename) and os.path.getsize(
            self.filename) > 0
        self.file = open(self.filename, "a" if self.append else "w", newline="")
        self.writer = csv.writer(self.file, delimiter=self.separator)
        self.keys = None
        self.header_written = has_rows

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if not self.header_written:
                self.writer.writerow(["epoch"] + self.keys)
        self.writer.writerow([epoch] + [logs.get(k, "NA") for k in self.keys])
        self.file.flush()

    def on_train_end(self, logs=None):
        if self.file is not None:
            self.file.close()
            self.file = None


class LearningRateScheduler(Callback):
    """Sets the learning rate of every parameter group at the start of each epoch to
    schedule(epoch, lr) (Keras's form), or steps a wick.optim.lr_scheduler schedule built on
    the model's optimizer after every epoch (or every batch, interval="batch"). Adds the rate
    in use at the end of the epoch (before an epoch's step) to its logs as "learning_rate"."""

    def __init__(self, schedule, verbose=0, interval="epoch"):
        super().__init__()
        self.is_scheduler = hasattr(schedule, "step") and hasattr(schedule, "optimizer")
        if not self.is_scheduler and not callable(schedule):
            raise TypeError(f"[LearningRateScheduler] schedule must be a function (epoch, lr) "
                            f"-> lr or a wick.optim.lr_scheduler schedule; got "
                            f"{type(schedule).__name__}")
        if interval not in ("epoch", "batch"):
            raise ValueError(f"[LearningRateScheduler] interval must be 'epoch' or 'batch'; got "
                             f"{interval!r}")
        if interval == "batch" and not self.is_scheduler:
            raise ValueError("[LearningRateScheduler] interval='batch' needs a "
                             "wick.optim.lr_scheduler schedule, not a function of the epoch")
        self.schedule = schedule
        self.verbose = verbose
        self.interval = interval

    def _groups(self):
        return self.model.optimizer.param_groups

    def on_train_begin(self, logs=None):
        if self.is_scheduler and self.schedule.optimizer is not self.model.optimizer:
            raise ValueError("[LearningRateScheduler] the schedule was built on another "
                             "optimizer than the one the model was compiled with")

    def on_epoch_begin(self, epoch, logs=None):
        if not self.is_scheduler:
            lr = self.schedule(epoch, self._groups()[0]["lr"])
            if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
                raise TypeError(f"[LearningRateScheduler] the schedule must return a number; "
                                f"got {type(lr).__name__} ({lr!r}) for epoch {epoch}")
            if not (math.isfinite(lr) and lr >= 0):
                raise ValueError(f"[LearningRateScheduler] the schedule returned lr={lr} for "
                                 f"epoch {epoch}; it must be finite and >= 0")
            for group in self._groups():
                group["lr"] = float(lr)
        if self.verbose > 0:
            print(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                  f"{self._groups()[0]['lr']}.")

    def on_train_batch_end(self, batch, logs=None):
        if self.interval == "batch":
            self.schedule.step()

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = self._groups()[0]["lr"]
        if self.is_scheduler and self.interval == "epoch":
            self.schedule.step()
