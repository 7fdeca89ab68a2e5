"""wick.keras.Model: Keras's compile / fit / evaluate / predict around any wick.nn.Module.

    model = wick.keras.Model(net)
    model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"])
    history = model.fit(train_loader, epochs=3, validation_data=test_loader,
                        callbacks=[wick.keras.callbacks.EarlyStopping(patience=2)])
    model.evaluate(test_loader)  # {"loss": ..., "accuracy": ...}

Each training step is the loop one writes by hand: module.train(), output = module(x),
loss = loss(output, y), optimizer.zero_grad(), loss.backward(), optimizer.step() - so fit gives
exactly the parameters of that loop over the same batches. Data is a DataLoader, any iterable of
(input, target) batches (reusable: it is iterated once per epoch), or tensors x and y, which fit
batches itself (batch_size, default 32, shuffled each epoch unless shuffle=False). Logged values
are averages over the epoch's examples; evaluation runs under no_grad in eval mode.
"""

import numbers

from wick import _C, nn, serialization
from wick.autograd.grad_mode import no_grad
from wick.keras import _compile
from wick.keras.callbacks import Callback, CallbackList, History
from wick.keras.progress import Progbar, ProgbarLogger
from wick.utils.data import DataLoader, TensorDataset


def _check_count(where, name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"[{where}] {name} must be an int; got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"[{where}] {name} must be >= {minimum}; got {value}")


def _as_batches(where, x, y, batch_size, shuffle, what="x"):
    """Something to iterate once per epoch, yielding (input, target) pairs."""
    if isinstance(x, (tuple, list)) and len(x) == 2 and all(isinstance(t, _C.Tensor) for t in x):
        if y is not None:
            raise ValueError(f"[{where}] {what} is an (inputs, targets) pair, so y must be None")
        x, y = x
    if isinstance(x, _C.Tensor):
        if not isinstance(y, _C.Tensor):
            raise ValueError(f"[{where}] {what} is a Tensor, so the targets y must be a Tensor "
                             f"too; got {type(y).__name__}")
        if x.dim() == 0 or y.dim() == 0 or x.shape[0] != y.shape[0]:
            raise ValueError(f"[{where}] inputs and targets need the same number of examples "
                             f"(first dim); got shapes {tuple(x.shape)} and {tuple(y.shape)}")
        batch_size = 32 if batch_size is None else batch_size
        _check_count(where, "batch_size", batch_size, 1)
        return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=shuffle)
    if y is not None:
        raise ValueError(f"[{where}] y is only for Tensor inputs; {what} is a "
                         f"{type(x).__name__}, which yields its own targets")
    if batch_size is not None:
        raise ValueError(f"[{where}] batch_size is only for Tensor inputs; a "
                         f"{type(x).__name__} makes its own batches")
    if not hasattr(x, "__iter__"):
        raise TypeError(f"[{where}] {what} must be a DataLoader, an iterable of (input, target) "
                        f"batches, or Tensors x and y; got {type(x).__name__}")
    return x


def _pairs(where, batches):
    for i, batch in enumerate(batches):
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            raise ValueError(f"[{where}] batch {i} is not an (input, target) pair; got "
                             f"{type(batch).__name__}"
                             f"{f' of length {len(batch)}' if hasattr(batch, '__len__') else ''}")
        yield batch


class _Means:
    """Example-weighted averages of the logged values over an epoch."""

    def __init__(self):
        self.sums, self.count = {}, 0

    def add(self, values, n):
        for k, v in values.items():
            self.sums[k] = self.sums.get(k, 0.0) + v * n
        self.count += n

    def result(self):
        return {k: s / max(self.count, 1) for k, s in self.sums.items()}


class Model:
    def __init__(self, module):
        if not isinstance(module, nn.Module):
            raise TypeError(f"[wick.keras.Model] expects a wick.nn.Module; got "
                            f"{type(module).__name__}")
        self.module = module
        self.optimizer = None
        self.loss = None
        self.metrics = []
        self.history = None
        self.stop_training = False

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def __repr__(self):
        return f"wick.keras.Model({self.module!r})"

    def summary(self):
        count = sum(p.numel() for p in self.module.parameters())
        print(f"{self.module}\nTotal params: {count:,}")

    def save_weights(self, filepath):
        serialization.save(self.module.state_dict(), filepath)

    def load_weights(self, filepath):
        self.module.load_state_dict(serialization.load(filepath))

    def compile(self, optimizer="adam", loss=None, metrics=None):
        """optimizer: "adam", "adamw", "sgd", a wick.optim optimizer over the module's
        parameters, or a function params -> optimizer. loss: a name (cross_entropy, mse, l1,
        nll, bce_with_logits, or Keras's long names) or a function (output, target) -> scalar
        Tensor. metrics: a list of names (accuracy, mse, mae) or functions -> number."""
        loss_fn = _compile.make_loss(loss)
        metric_fns = _compile.make_metrics(metrics)
        self.optimizer = _compile.make_optimizer(optimizer, list(self.module.parameters()))
        self.loss, self.metrics = loss_fn, metric_fns

    def _require_compiled(self, method):
        if self.optimizer is None:
            raise RuntimeError(f"[Model.{method}] the model must be compiled before {method}(): "
                               f"call model.compile(optimizer, loss, metrics) first")

    def _device_of(self):
        for p in self.module.parameters():
            return p.device
        return None

    def _step_values(self, output, target, loss):
        values = {"loss": loss.item()}
        with no_grad():
            output = output.detach()
            for name, fn in self.metrics:
                v = fn(output, target)
                values[name] = float(v.item() if isinstance(v, _C.Tensor) else v)
        return values

    def _loss_of(self, where, output, target):
        loss = self.loss(output, target)
        if not isinstance(loss, _C.Tensor) or loss.numel() != 1:
            shape = tuple(loss.shape) if isinstance(loss, _C.Tensor) else type(loss).__name__
            raise ValueError(f"[Model.{where}] the loss must be a one-element Tensor; got {shape} "
                             f"(a loss with reduction='none'?)")
        return loss

    def _train_epoch(self, batches, callbacks, device):
        self.module.train()
        means = _Means()
        for step, (x, y) in enumerate(_pairs("Model.fit", batches)):
            callbacks.on_train_batch_begin(step, None)
            if device is not None:
                x, y = x.to(device), y.to(device)
            output = self.module(x)
            loss = self._loss_of("fit", output, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            means.add(self._step_values(output, y, loss), y.shape[0] if y.dim() > 0 else 1)
            callbacks.on_train_batch_end(step, means.result())
        return means

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_data=None, shuffle=True, initial_epoch=0):
        """Trains for epochs - initial_epoch epochs; returns the History (also model.history).
        verbose: 0 silent, 1 a progress bar on a terminal (one line per epoch in a log),
        2 one line per epoch."""
        self._require_compiled("fit")
        _check_count("Model.fit", "epochs", epochs, 1)
        _check_count("Model.fit", "initial_epoch", initial_epoch, 0)
        if initial_epoch >= epochs:
            raise ValueError(f"[Model.fit] initial_epoch ({initial_epoch}) must be less than "
                             f"epochs ({epochs}), the index of the last epoch plus one")
        if verbose not in (0, 1, 2, "auto"):
            raise ValueError(f"[Model.fit] verbose must be 0, 1, 2 or 'auto'; got {verbose!r}")
        if callbacks is not None and not isinstance(callbacks, (list, tuple)):
            raise TypeError(f"[Model.fit] callbacks must be a list of Callback objects; got "
                            f"{type(callbacks).__name__}")
        callbacks = list(callbacks or [])
        for c in callbacks:
            if not isinstance(c, Callback):
                raise TypeError(f"[Model.fit] callbacks must be wick.keras.callbacks.Callback "
                                f"objects; got {type(c).__name__}")
        train = _as_batches("Model.fit", x, y, batch_size, shuffle)
        val = None
        if validation_data is not None:
            val = _as_batches("Model.fit", validation_data, None, None, False, "validation_data")
        self.history = History()
        callbacks.append(self.history)
        if verbose:
            callbacks.append(ProgbarLogger(1 if verbose == "auto" else verbose))
        params = {"epochs": epochs, "verbose": verbose,
                  "steps": len(train) if hasattr(train, "__len__") else None}
        callbacks = CallbackList(callbacks, self, params)
        device = self._device_of()
        self.stop_training = False
        callbacks.on_train_begin({})
        logs = {}
        for epoch in range(initial_epoch, epochs):
            callbacks.on_epoch_begin(epoch, {})
            means = self._train_epoch(train, callbacks, device)
            if means.count == 0:
                raise ValueError(f"[Model.fit] the training data yielded no batches in epoch "
                                 f"{epoch + 1}; a generator is used up after one pass - pass a "
                                 f"DataLoader or a list of batches")
            logs = means.result()
            if val is not None:
                val_logs, _ = self._evaluate_batches("fit", val, device)
                logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        callbacks.on_train_end(logs)
        return self.history

    def _evaluate_batches(self, where, batches, device, progbar=None):
        was_training = self.module.training
        self.module.eval()
        means, steps = _Means(), 0
        try:
            with no_grad():
                for step, (x, y) in enumerate(_pairs(f"Model.{where}", batches)):
                    if device is not None:
                        x, y = x.to(device), y.to(device)
                    output = self.module(x)
                    loss = self._loss_of(where, output, y)
                    means.add(self._step_values(output, y, loss), y.shape[0] if y.dim() else 1)
                    steps = step + 1
                    if progbar is not None:
                        progbar.update(steps, means.result())
        finally:
            self.module.train(was_training)
        if means.count == 0:
            raise ValueError(f"[Model.{where}] the evaluation data yielded no batches")
        return means.result(), steps

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1):
        """The loss and metrics over the data, as a dict {"loss": ..., "accuracy": ...}."""
        self._require_compiled("evaluate")
        batches = _as_batches("Model.evaluate", x, y, batch_size, False)
        progbar = None
        if verbose:
            progbar = Progbar(len(batches) if hasattr(batches, "__len__") else None, verbose)
        logs, steps = self._evaluate_batches("evaluate", batches, self._device_of(), progbar)
        if progbar is not None:
            progbar.finish(steps, logs)
        return logs

    def predict(self, x, batch_size=None):
        """The module's outputs for a Tensor of inputs (in batches of batch_size, default 32),
        or for the inputs of a loader's batches, concatenated along the first dim. Needs no
        compile()."""
        if isinstance(x, _C.Tensor):
            batch_size = 32 if batch_size is None else batch_size
            _check_count("Model.predict", "batch_size", batch_size, 1)
            batches = (x[i:i + batch_size] for i in range(0, x.shape[0], batch_size))
        elif batch_size is not None:
            raise ValueError(f"[Model.predict] batch_size is only for Tensor inputs; a "
                             f"{type(x).__name__} makes its own batches")
        elif hasattr(x, "__iter__"):
            batches = (b[0] if isinstance(b, (tuple, list)) else b for b in x)
        else:
            raise TypeError(f"[Model.predict] x must be a Tensor or an iterable of batches; got "
                            f"{type(x).__name__}")
        device = self._device_of()
        was_training = self.module.training
        self.module.eval()
        try:
            with no_grad():
                outputs = [self.module(b.to(device) if device is not None else b)
                           for b in batches]
        finally:
            self.module.train(was_training)
        if not outputs:
            raise ValueError("[Model.predict] the data yielded no batches")
        return _C.cat(outputs, 0)
