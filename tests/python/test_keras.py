"""wick.keras: compile / fit / evaluate / predict converge and equal the hand-written loop exactly,
each callback does what Keras's does, the progress lines look like Keras's, and bad arguments
raise Keras/PyTorch-like exceptions that name the method."""

import csv
import io
import os
import re

import pytest

import wick
import wick.nn.functional as F
from wick import nn
from wick.keras import Model
from wick.keras.callbacks import (Callback, CSVLogger, EarlyStopping, LearningRateScheduler,
                                  ModelCheckpoint)
from wick.keras.progress import Progbar
from wick.utils.data import DataLoader, TensorDataset


def separable(n=256, seed=3):
    """Two classes on either side of the line x0 + x1 = 0."""
    wick.manual_seed(seed)
    x = wick.randn(n, 2)
    return x, (x[:, 0] + x[:, 1] > 0).long()


def make_net(seed=0):
    wick.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))


def compiled(optimizer="sgd", metrics=None, seed=0):
    model = Model(make_net(seed))
    model.compile(optimizer, "cross_entropy", metrics)
    return model


class Script(Callback):
    """Puts a scripted value into the logs at the end of each epoch (a metric whose course the
    test decides) and records the first weight then."""

    def __init__(self, values):
        super().__init__()
        self.values, self.weights = values, []

    def on_epoch_end(self, epoch, logs=None):
        logs["score"] = self.values[epoch]
        self.weights.append(self.model.module[0].weight.detach().clone())


def test_fit_converges_and_fills_the_history():
    x, y = separable()
    model = compiled("adam", ["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=20, validation_data=(x, y), verbose=0)
    assert history is model.history
    assert history.epoch == list(range(20))
    assert list(history.history) == ["loss", "accuracy", "val_loss", "val_accuracy"]
    assert all(len(v) == 20 for v in history.history.values())
    assert history.history["loss"][-1] < history.history["loss"][0]
    result = model.evaluate(x, y, verbose=0)
    assert set(result) == {"loss", "accuracy"} and result["accuracy"] >= 0.95
    assert result["loss"] == history.history["val_loss"][-1]  # same batches, same numbers


def test_one_epoch_of_sgd_equals_the_hand_written_loop():
    x, y = separable(96)
    model = Model(make_net(7))
    model.compile(lambda p: wick.optim.SGD(p, lr=0.1, momentum=0.9), "cross_entropy")
    history = model.fit(x, y, batch_size=32, shuffle=False, verbose=0)

    net = make_net(7)
    optimizer = wick.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for i in range(0, 96, 32):
        loss = F.cross_entropy(net(x[i:i + 32]), y[i:i + 32])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    for a, b in zip(model.module.parameters(), net.parameters()):
        assert wick.equal(a, b)
    assert history.history["loss"] == [sum(losses) / 3]


def test_data_as_loader_list_or_tensor_pair_give_the_same_training():
    x, y = separable(64)
    runs = []
    for data in (DataLoader(TensorDataset(x, y), batch_size=16), [(x[i:i + 16], y[i:i + 16])
                                                                  for i in range(0, 64, 16)]):
        model = compiled()
        runs.append(model.fit(data, epochs=2, verbose=0).history["loss"])
    model = compiled()
    runs.append(model.fit((x, y), batch_size=16, epochs=2, shuffle=False, verbose=0)
                .history["loss"])
    assert runs[0] == runs[1] == runs[2]


def test_predict_and_evaluate():
    x, y = separable(50)
    model = compiled(metrics=["accuracy"])
    with wick.no_grad():
        model.module.eval()
        expected = model.module(x)
        model.module.train()
    assert wick.equal(model.predict(x, batch_size=7), expected)
    assert wick.equal(model.predict(DataLoader(TensorDataset(x, y), batch_size=20)), expected)
    assert model.module.training  # predict restores the mode
    result = model.evaluate(x, y, batch_size=50, verbose=0)
    assert result["loss"] == pytest.approx(F.cross_entropy(expected, y).item(), rel=1e-6)
    assert result["accuracy"] == (expected.argmax(1) == y).sum().item() / 50


def test_custom_loss_and_metrics():
    x, y = separable(64)
    calls = []

    def first_label(output, target):
        return target[0]

    def loss(output, target):
        calls.append(1)
        return F.cross_entropy(output, target)

    model = Model(make_net())
    model.compile("adam", loss, ["acc", first_label])
    history = model.fit(x, y, batch_size=64, epochs=2, shuffle=False, verbose=0)
    assert len(calls) == 2
    assert history.history["first_label"] == [y[0].item()] * 2
    assert "acc" in history.history


def test_regression_with_mse_and_mae():
    wick.manual_seed(1)
    x = wick.randn(128, 3)
    y = x @ wick.tensor([[1.0], [-2.0], [0.5]])
    wick.manual_seed(0)
    model = Model(nn.Linear(3, 1))
    model.compile(lambda p: wick.optim.SGD(p, lr=0.1), "mse", ["mae"])
    history = model.fit(x, y, epochs=30, verbose=0)
    assert history.history["loss"][-1] < 1e-3
    assert history.history["mae"][-1] < 0.03


def test_early_stopping_stops_after_patience_epochs_and_restores_the_best():
    x, y = separable(64)
    model = compiled()
    # Best at epoch 2 (0.5); epochs 3 and 4 are no better by more than min_delta 0.05.
    script = Script([1.0, 0.8, 0.5, 0.46, 0.6, 0.1, 0.1])
    stop = EarlyStopping("score", min_delta=0.05, patience=2, restore_best_weights=True)
    history = model.fit(x, y, epochs=7, callbacks=[script, stop], verbose=0)
    assert history.epoch == [0, 1, 2, 3, 4]
    assert (stop.stopped_epoch, stop.best_epoch) == (4, 2)
    assert wick.equal(model.module[0].weight, script.weights[2])
    assert not wick.equal(script.weights[4], script.weights[2])


def test_early_stopping_mode_auto_baseline_and_a_missing_monitor():
    x, y = separable(64)
    assert EarlyStopping("val_accuracy").mode == "max"
    assert EarlyStopping("val_loss").mode == "min"
    # A flat score: without a baseline the first epoch counts as an improvement and resets the
    # wait; below the baseline nothing does, so training stops an epoch earlier.
    for baseline, epochs in ((None, [0, 1, 2]), (0.9, [0, 1])):
        stop = EarlyStopping("score", patience=2, mode="max", baseline=baseline)
        history = compiled().fit(x, y, epochs=6, callbacks=[Script([0.5] * 6), stop], verbose=0)
        assert history.epoch == epochs
    with pytest.warns(RuntimeWarning, match="'val_loss' is not in the logs"):
        compiled().fit(x, y, epochs=1, callbacks=[EarlyStopping()], verbose=0)


def test_model_checkpoint_saves_only_improvements(tmp_path):
    x, y = separable(64)
    model = compiled()
    script = Script([0.9, 0.95, 0.7, 0.8])
    best = ModelCheckpoint(str(tmp_path / "ckpt-{epoch:02d}-{score:.2f}.safetensors"), "score",
                           save_best_only=True)
    every = ModelCheckpoint(tmp_path / "all" / "{epoch}.safetensors")
    model.fit(x, y, epochs=4, callbacks=[script, best, every], verbose=0)
    assert sorted(os.listdir(tmp_path)) == ["all", "ckpt-01-0.90.safetensors",
                                            "ckpt-03-0.70.safetensors"]
    assert sorted(os.listdir(tmp_path / "all")) == [f"{e}.safetensors" for e in (1, 2, 3, 4)]
    saved = wick.load(str(tmp_path / "ckpt-03-0.70.safetensors"))
    assert wick.equal(saved["0.weight"], script.weights[2])


def test_model_checkpoint_training_checkpoint_and_bad_pattern(tmp_path):
    x, y = separable(64)
    model = compiled("adam")
    path = str(tmp_path / "train.safetensors")
    model.fit(x, y, epochs=2, callbacks=[ModelCheckpoint(path, "loss", save_weights_only=False)],
              verbose=0)
    saved = wick.load(path)
    assert saved["epoch"] == 2 and set(saved) == {"model", "optimizer", "epoch"}
    other = make_net(9)
    other.load_state_dict(saved["model"])
    assert wick.equal(other[0].weight, model.module[0].weight)
    with pytest.raises(KeyError, match="cannot format filepath"):
        compiled().fit(x, y, callbacks=[ModelCheckpoint(str(tmp_path / "{val_auc}"))], verbose=0)


def test_csv_logger_writes_keras_columns_and_appends(tmp_path):
    x, y = separable(64)
    path = tmp_path / "logs" / "log.csv"
    model = compiled(metrics=["accuracy"])
    history = model.fit(x, y, epochs=3, validation_data=(x, y), callbacks=[CSVLogger(path)],
                        verbose=0)
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["epoch", "accuracy", "loss", "val_accuracy", "val_loss"]
    assert [r[0] for r in rows[1:]] == ["0", "1", "2"]
    for i, row in enumerate(rows[1:]):  # exact: the values' repr
        assert [float(v) for v in row[1:]] == [history.history[k][i] for k in rows[0][1:]]
    model.fit(x, y, epochs=1, validation_data=(x, y), callbacks=[CSVLogger(path, append=True)],
              verbose=0)
    rows = list(csv.reader(open(path)))
    assert len(rows) == 5 and rows[4][0] == "0"


def test_learning_rate_scheduler_function_and_wick_schedules():
    x, y = separable(64)
    model = compiled()
    halve = LearningRateScheduler(lambda epoch, lr: 0.2 if epoch == 0 else lr / 2)
    history = model.fit(x, y, epochs=3, callbacks=[halve], verbose=0)
    assert history.history["learning_rate"] == [0.2, 0.1, 0.05]
    assert model.optimizer.param_groups[0]["lr"] == 0.05

    model = compiled()
    step = wick.optim.lr_scheduler.StepLR(model.optimizer, step_size=2, gamma=0.1)
    history = model.fit(x, y, epochs=4, callbacks=[LearningRateScheduler(step)], verbose=0)
    assert history.history["learning_rate"] == pytest.approx([0.01, 0.01, 0.001, 0.001])

    model = compiled()
    per_batch = wick.optim.lr_scheduler.LinearLR(model.optimizer, start_factor=0.5,
                                                 total_iters=4)
    history = model.fit(x, y, batch_size=16, epochs=1,  # 4 batches: the warm-up ends
                        callbacks=[LearningRateScheduler(per_batch, interval="batch")], verbose=0)
    assert history.history["learning_rate"] == pytest.approx([0.01])

    other = wick.optim.SGD(make_net().parameters(), lr=0.1)
    with pytest.raises(ValueError, match="another optimizer"):
        compiled().fit(x, y, callbacks=[LearningRateScheduler(
            wick.optim.lr_scheduler.StepLR(other, 1))], verbose=0)
    with pytest.raises(TypeError, match="must return a number"):
        compiled().fit(x, y, callbacks=[LearningRateScheduler(lambda e, lr: "fast")], verbose=0)
    with pytest.raises(ValueError, match="finite and >= 0"):
        compiled().fit(x, y, callbacks=[LearningRateScheduler(lambda e, lr: -1.0)], verbose=0)


def test_progress_lines_in_a_log(capsys):
    x, y = separable(64)
    compiled(metrics=["accuracy"]).fit(x, y, batch_size=16, epochs=2, validation_data=(x, y))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    number = r"\d+\.\d{4}"
    assert re.fullmatch(rf"4/4 - \d+m?s - loss: {number} - accuracy: {number} - val_loss: "
                        rf"{number} - val_accuracy: {number}", lines[1]), lines[1]
    compiled().fit(x, y, epochs=2, verbose=0)
    assert capsys.readouterr().out == ""


def test_progress_bar_redraws_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    bar = Progbar(4, stream=out, interval=0)
    bar.update(1, {"loss": 0.5})
    bar.finish(4, {"loss": 0.25, "tiny": 1e-5})
    text = out.getvalue()
    assert text.startswith("\r1/4 [======>.......................] - ETA: ")
    assert "\r4/4 [==============================] - " in text
    assert text.endswith(" - loss: 0.2500 - tiny: 1.0000e-05\x1b[K\n")


def test_a_generator_is_used_up_after_one_epoch():
    x, y = separable(32)
    batches = ((x[i:i + 16], y[i:i + 16]) for i in (0, 16))
    with pytest.raises(ValueError, match="no batches in epoch 2; a generator is used up"):
        compiled().fit(batches, epochs=2, verbose=0)


X, Y = separable(32)
BAD_COMPILE = [
    (dict(loss="hinge"), ValueError, r"unknown loss 'hinge'; expected one of cross_entropy, "),
    (dict(loss=None), TypeError, "loss must be a name .* got nothing"),
    (dict(loss="mse", optimizer="rmsprop"), ValueError, "unknown optimizer 'rmsprop'; expected "
                                                        "one of adam, adamw, sgd"),
    (dict(loss="mse", optimizer=42), TypeError, "optimizer must be a name"),
    (dict(loss="mse", optimizer=lambda p: 42), TypeError,
     "the optimizer function returned int, not a wick.optim"),
    (dict(loss="mse", optimizer=wick.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)),
     ValueError, "the optimizer holds none of the model's parameters"),
    (dict(loss="mse", metrics="accuracy"), TypeError, "metrics must be a list"),
    (dict(loss="mse", metrics=["f1"]), ValueError, "unknown metric 'f1'; expected one of"),
    (dict(loss="mse", metrics=["acc", "acc"]), ValueError, "metric names must be unique"),
]


@pytest.mark.parametrize("kwargs,error,message", BAD_COMPILE)
def test_bad_compile_arguments(kwargs, error, message):
    with pytest.raises(error, match=r"\[Model.compile\] " + message):
        Model(make_net()).compile(**kwargs)


def scalar_loss_fit(model):
    model.compile("sgd", lambda o, t: F.cross_entropy(o, t, reduction="none"))
    model.fit(X, Y, verbose=0)


BAD_USE = [
    (lambda m: m.fit(X, Y), RuntimeError, r"\[Model.fit\] the model must be compiled before "
                                          r"fit\(\): call model.compile"),
    (lambda m: m.evaluate(X, Y), RuntimeError, r"compiled before evaluate\(\)"),
    (lambda m: Model(object()), TypeError, "expects a wick.nn.Module; got object"),
    (lambda m: m.predict(42), TypeError, "x must be a Tensor or an iterable"),
    (lambda m: m.predict(X, batch_size=0), ValueError, "batch_size must be >= 1"),
    (scalar_loss_fit, ValueError, r"the loss must be a one-element Tensor; got \(32,\)"),
]
BAD_FIT = [
    (dict(x=X, y=Y, epochs=0), ValueError, r"epochs must be >= 1; got 0"),
    (dict(x=X, y=Y, epochs=1.5), TypeError, r"epochs must be an int; got float"),
    (dict(x=X, y=Y, epochs=True), TypeError, r"epochs must be an int; got bool"),
    (dict(x=X, y=Y, epochs=2, initial_epoch=2), ValueError, "initial_epoch"),
    (dict(x=X, y=Y, verbose=3), ValueError, "verbose must be 0, 1, 2 or 'auto'"),
    (dict(x=X), ValueError, "x is a Tensor, so the targets y must be a Tensor too; got NoneType"),
    (dict(x=X, y=Y[:10]), ValueError,
     r"inputs and targets need the same number of examples .* \(32, 2\) and \(10,\)"),
    (dict(x=X, y=Y, batch_size=0), ValueError, "batch_size must be >= 1; got 0"),
    (dict(x=[(X, Y)], y=Y), ValueError, "y is only for Tensor inputs"),
    (dict(x=[(X, Y)], batch_size=8), ValueError, "batch_size is only for Tensor inputs"),
    (dict(x=42), TypeError, "x must be a DataLoader, an iterable of .* got int"),
    (dict(x=[X]), ValueError, r"batch 0 is not an \(input, target\) pair; got Tensor"),
    (dict(x=[(X, Y, Y)]), ValueError, "batch 0 is not an .* pair; got tuple of length 3"),
    (dict(x=X, y=Y, callbacks=[object()]), TypeError, "callbacks must be wick.keras.callbacks"),
    (dict(x=X, y=Y, validation_data=42), TypeError, "validation_data must be a DataLoader"),
]


@pytest.mark.parametrize("call,error,message", BAD_USE)
def test_bad_use(call, error, message):
    with pytest.raises(error, match=message):
        call(Model(make_net()))


@pytest.mark.parametrize("kwargs,error,message", BAD_FIT)
def test_bad_fit_arguments(kwargs, error, message):
    with pytest.raises(error, match=r"\[Model.fit\] " + message):
        compiled().fit(**{"verbose": 0, **kwargs})


@pytest.mark.parametrize("make,error,message", [
    (lambda: EarlyStopping(mode="lowest"), ValueError, "mode must be 'auto', 'min' or 'max'"),
    (lambda: EarlyStopping(patience=-1), ValueError, "patience must be an int >= 0; got -1"),
    (lambda: EarlyStopping(min_delta="0.1"), TypeError, "min_delta must be a number"),
    (lambda: ModelCheckpoint(42), TypeError, "filepath must be a path; got int"),
    (lambda: CSVLogger(None), TypeError, "filename must be a path"),
    (lambda: LearningRateScheduler(42), TypeError, r"schedule must be a function \(epoch, lr\)"),
    (lambda: LearningRateScheduler(lambda e, lr: lr, interval="batch"), ValueError,
     "interval='batch' needs a wick.optim.lr_scheduler schedule"),
    (lambda: LearningRateScheduler(lambda e, lr: lr, interval="step"), ValueError,
     "interval must be 'epoch' or 'batch'"),
])
def test_bad_callback_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make()
