"""Bad inputs to the Keras-style loop (wick.keras): Model, compile, fit, evaluate, predict and
the callbacks (EarlyStopping, ModelCheckpoint, CSVLogger, LearningRateScheduler).

How the types were checked: PyTorch has no such loop, so the rows use Python's convention, which
Keras 2 follows too: ValueError for a bad value (unknown optimizer or loss name, epochs=0, a
loss that is not one number), TypeError for a wrong type (a loss that is an int, a callback that
is a function), RuntimeError for a call out of order (fit before compile), KeyError for a
checkpoint name that uses a value the logs lack (str.format's). Op errors inside a step (a
target out of range, inputs of the wrong width) keep the op's own type, as in test_ops.py."""

import atexit
import math
import os
import shutil
import tempfile

import wick as W
import wick.nn as nn
import wick.nn.functional as F
from wick.keras import Model
from wick.keras import callbacks as C
from wick.utils.data import DataLoader, TensorDataset

from bad_inputs.corpus import Bad, check, parametrize

_DIR = tempfile.mkdtemp(prefix="wick-bad-keras-")
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)

W.manual_seed(0)
X, Y = W.randn(8, 4), W.randint(0, 3, (8,))


def _model(loss="cross_entropy", **kwargs):
    m = Model(nn.Linear(4, 3))
    m.compile("sgd", loss, **kwargs)
    return m


def _fit(*args, model=None, **kwargs):
    return (model or _model()).fit(*args, **{"verbose": 0, **kwargs})


def _uncompiled():
    return Model(nn.Linear(4, 3))


def _loader():
    return DataLoader(TensorDataset(X, Y), batch_size=4)


def _with_callback(callback, epochs=1):
    return _fit(X, Y, epochs=epochs, callbacks=[callback])


def _load_wider_weights():
    path = os.path.join(_DIR, "wider.safetensors")
    W.save(nn.Linear(5, 3).state_dict(), path)
    _model().load_weights(path)


def _other_optimizer():
    return W.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)


MODEL = [
    Bad("model-not-a-module", lambda: Model(lambda x: x), TypeError, "wick.keras.Model",
        ["function"]),
    Bad("fit-before-compile", lambda: _uncompiled().fit(X, Y, verbose=0), RuntimeError,
        "Model.fit", ["compile"]),
    Bad("evaluate-before-compile", lambda: _uncompiled().evaluate(X, Y, verbose=0),
        RuntimeError, "Model.evaluate", ["compile"]),
    Bad("compile-unknown-optimizer", lambda: _uncompiled().compile("adagradx", "mse"),
        ValueError, "Model.compile", ["'adagradx'"]),
    Bad("compile-optimizer-int", lambda: _uncompiled().compile(3, "mse"), TypeError,
        "Model.compile", ["int"]),
    Bad("compile-optimizer-of-other-model", lambda: _uncompiled().compile(_other_optimizer(),
                                                                          "mse"),
        ValueError, "Model.compile", ["none of the model's parameters"]),
    Bad("compile-optimizer-function-returns-none",
        lambda: _uncompiled().compile(lambda p: None, "mse"), TypeError, "Model.compile",
        ["NoneType"]),
    Bad("compile-no-loss", lambda: _uncompiled().compile("sgd"), TypeError, "Model.compile",
        ["got nothing"]),
    Bad("compile-unknown-loss", lambda: _uncompiled().compile("sgd", "hinge"), ValueError,
        "Model.compile", ["'hinge'"]),
    Bad("compile-loss-int", lambda: _uncompiled().compile("sgd", 3), TypeError,
        "Model.compile", ["int"]),
    Bad("compile-metrics-str", lambda: _model(metrics="accuracy"), TypeError, "Model.compile",
        ["'accuracy'"]),
    Bad("compile-unknown-metric", lambda: _model(metrics=["f1"]), ValueError, "Model.compile",
        ["'f1'"]),
    Bad("compile-metric-twice", lambda: _model(metrics=["accuracy", "accuracy"]), ValueError,
        "Model.compile", ["['accuracy', 'accuracy']"]),
    Bad("compile-metric-int", lambda: _model(metrics=[3]), TypeError, "Model.compile", ["int"]),
]

FIT = [
    Bad("fit-epochs-0", lambda: _fit(X, Y, epochs=0), ValueError, "Model.fit", ["epochs", "0"]),
    Bad("fit-epochs-float", lambda: _fit(X, Y, epochs=2.0), TypeError, "Model.fit", ["2.0"]),
    Bad("fit-epochs-str", lambda: _fit(X, Y, epochs="2"), TypeError, "Model.fit", ["'2'"]),
    Bad("fit-initial-epoch-past-end", lambda: _fit(X, Y, epochs=2, initial_epoch=2),
        ValueError, "Model.fit", ["initial_epoch (2)", "epochs (2)"]),
    Bad("fit-initial-epoch-negative", lambda: _fit(X, Y, epochs=2, initial_epoch=-1),
        ValueError, "Model.fit", ["-1"]),
    Bad("fit-verbose-3", lambda: _fit(X, Y, verbose=3), ValueError, "Model.fit", ["3"]),
    Bad("fit-callback-function", lambda: _fit(X, Y, callbacks=[lambda: 0]), TypeError,
        "Model.fit", ["function"]),
    # silent: "'History' object is not iterable", naming neither fit nor callbacks.
    Bad("fit-callbacks-not-a-list", lambda: _fit(X, Y, callbacks=C.History()), TypeError,
        "Model.fit", ["callbacks", "History"]),
    Bad("fit-tensor-without-targets", lambda: _fit(X), ValueError, "Model.fit", ["NoneType"]),
    Bad("fit-targets-list", lambda: _fit(X, [1, 2]), ValueError, "Model.fit", ["list"]),
    Bad("fit-example-count-mismatch", lambda: _fit(X, Y[:5]), ValueError, "Model.fit",
        ["(8, 4)", "(5,)"]),
    Bad("fit-scalar-targets", lambda: _fit(X, W.tensor(1)), ValueError, "Model.fit", ["()"]),
    Bad("fit-batch-size-0", lambda: _fit(X, Y, batch_size=0), ValueError, "Model.fit",
        ["batch_size", "0"]),
    Bad("fit-batch-size-float", lambda: _fit(X, Y, batch_size=2.5), TypeError, "Model.fit",
        ["2.5"]),
    Bad("fit-loader-and-targets", lambda: _fit(_loader(), Y), ValueError, "Model.fit",
        ["DataLoader"]),
    Bad("fit-loader-and-batch-size", lambda: _fit(_loader(), batch_size=4), ValueError,
        "Model.fit", ["batch_size", "DataLoader"]),
    Bad("fit-int-data", lambda: _fit(5), TypeError, "Model.fit", ["int"]),
    Bad("fit-no-batches", lambda: _fit([]), ValueError, "Model.fit", ["no batches", "epoch 1"]),
    Bad("fit-generator-used-up", lambda: _fit(((X, Y) for _ in range(1)), epochs=2), ValueError,
        "Model.fit", ["epoch 2", "generator"]),
    Bad("fit-batch-triple", lambda: _fit([(X, Y, Y)]), ValueError, "Model.fit",
        ["batch 0", "length 3"]),
    Bad("fit-batch-bare-tensor", lambda: _fit([X]), ValueError, "Model.fit",
        ["batch 0", "Tensor"]),
    Bad("fit-loss-reduction-none", lambda: _fit(X, Y, model=_model(
        lambda o, t: F.cross_entropy(o, t, reduction="none"))), ValueError, "Model.fit",
        ["(8,)", "reduction='none'"]),
    Bad("fit-loss-returns-float", lambda: _fit(X, Y, model=_model(lambda o, t: 1.0)),
        ValueError, "Model.fit", ["float"]),
    Bad("fit-inputs-too-wide", lambda: _fit(W.randn(8, 5), Y), ValueError, "linear",
        ["(8, 5)"]),
    Bad("fit-target-out-of-range", lambda: _fit(X, W.full((8,), 7, dtype=W.int64)), IndexError,
        "cross_entropy", ["target 7", "3 classes"]),
    Bad("fit-validation-int", lambda: _fit(X, Y, validation_data=3), TypeError, "Model.fit",
        ["validation_data", "int"]),
    Bad("fit-validation-empty", lambda: _fit(X, Y, validation_data=[]), ValueError, "Model.fit",
        ["no batches"]),
    Bad("evaluate-no-batches", lambda: _model().evaluate([], verbose=0), ValueError,
        "Model.evaluate", ["no batches"]),
    Bad("predict-int", lambda: _model().predict(3), TypeError, "Model.predict", ["int"]),
    Bad("predict-batch-size-0", lambda: _model().predict(X, batch_size=0), ValueError,
        "Model.predict", ["batch_size", "0"]),
    Bad("predict-no-batches", lambda: _model().predict([]), ValueError, "Model.predict",
        ["no batches"]),
    Bad("predict-loader-and-batch-size", lambda: _model().predict(_loader(), batch_size=2),
        ValueError, "Model.predict", ["batch_size"]),
    Bad("load-weights-of-wider-model", _load_wider_weights, RuntimeError, "Linear",
        ["size mismatch for weight"]),
]

CALLBACKS = [
    Bad("early-stopping-patience-negative", lambda: C.EarlyStopping(patience=-1), ValueError,
        "EarlyStopping", ["-1"]),
    Bad("early-stopping-mode", lambda: C.EarlyStopping(mode="up"), ValueError, "EarlyStopping",
        ["'up'"]),
    Bad("early-stopping-min-delta-str", lambda: C.EarlyStopping(min_delta="0.1"), TypeError,
        "EarlyStopping", ["'0.1'"]),
    Bad("checkpoint-path-int", lambda: C.ModelCheckpoint(3), TypeError, "ModelCheckpoint",
        ["int"]),
    Bad("checkpoint-mode", lambda: C.ModelCheckpoint(os.path.join(_DIR, "m.pt"), mode="x"),
        ValueError, "ModelCheckpoint", ["'x'"]),
    Bad("checkpoint-name-uses-missing-log",
        lambda: _with_callback(C.ModelCheckpoint(os.path.join(_DIR, "{val_acc}.pt"))), KeyError,
        "ModelCheckpoint", ["{val_acc}", "'val_acc'"]),
    Bad("csv-logger-path-int", lambda: C.CSVLogger(3), TypeError, "CSVLogger", ["int"]),
    Bad("lr-schedule-not-callable", lambda: C.LearningRateScheduler(0.1), TypeError,
        "LearningRateScheduler", ["float"]),
    Bad("lr-schedule-interval", lambda: C.LearningRateScheduler(lambda e, lr: lr,
                                                                interval="step"),
        ValueError, "LearningRateScheduler", ["'step'"]),
    Bad("lr-schedule-batch-needs-scheduler",
        lambda: C.LearningRateScheduler(lambda e, lr: lr, interval="batch"), ValueError,
        "LearningRateScheduler", ["interval='batch'"]),
    Bad("lr-schedule-returns-str",
        lambda: _with_callback(C.LearningRateScheduler(lambda e, lr: "x")), TypeError,
        "LearningRateScheduler", ["'x'", "epoch 0"]),
    Bad("lr-schedule-returns-negative",
        lambda: _with_callback(C.LearningRateScheduler(lambda e, lr: -1.0)), ValueError,
        "LearningRateScheduler", ["lr=-1.0"]),
    Bad("lr-schedule-returns-nan",
        lambda: _with_callback(C.LearningRateScheduler(lambda e, lr: math.nan)), ValueError,
        "LearningRateScheduler", ["lr=nan"]),
    Bad("lr-schedule-of-other-optimizer", lambda: _with_callback(C.LearningRateScheduler(
        W.optim.lr_scheduler.StepLR(_other_optimizer(), 1))), ValueError,
        "LearningRateScheduler", ["another optimizer"]),
]

CASES = MODEL + FIT + CALLBACKS


@parametrize(CASES)
def test_bad_input(case):
    check(case)
