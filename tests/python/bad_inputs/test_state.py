"""Bad inputs to optimizers, state dicts, schedulers, clip_grad, GradScaler, wick.save/wick.load
and seeds (a parameter resized after the optimizer has state, optimizer state with an entry
missing, and the silent wrong answers around them). Each row is one mistake;
the exception type is PyTorch's (or Python's, for files) for the same mistake."""

import atexit
import json
import math
import os
import pickle
import shutil
import struct
import tempfile

import wick
from wick import nn, optim
from wick.amp import GradScaler
from wick.optim import lr_scheduler

from bad_inputs.corpus import Bad, check, parametrize

_DIR = tempfile.mkdtemp(prefix="wick-bad-state-")
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)


def _path(name):
    return os.path.join(_DIR, name)


def _param(*shape):
    return nn.Parameter(wick.ones(*shape))


def _stepped(kind, shape=(3,), **kwargs):
    """An optimizer of `kind` over one parameter, after one step (so it has state)."""
    p = _param(*shape)
    opt = kind([p], **({"lr": 0.1} if kind is optim.SGD else {}), **kwargs)
    p.grad = wick.ones(*shape)
    opt.step()
    return p, opt


def _resized_step(kind, new_shape, **kwargs):
    p, opt = _stepped(kind, **kwargs)
    p.data = wick.zeros(*new_shape)
    p.grad = wick.ones(*new_shape)
    opt.step()


def _reshaped_step(kind, **kwargs):
    p, opt = _stepped(kind, shape=(3, 4), **kwargs)
    p.data = wick.zeros(4, 3)  # same element count, other shape
    p.grad = wick.ones(4, 3)
    opt.step()


def _set_grad(grad, shape=(3,)):
    p = _param(*shape)
    p.grad = grad


def _load_edited(kind, edit, **kwargs):
    """opt.load_state_dict of its own state dict after `edit`; the load must fail."""
    _, opt = _stepped(kind, **kwargs)
    sd = opt.state_dict()
    edit(sd)
    opt.load_state_dict(sd)


def _del_state(name):
    return lambda sd: sd["state"][0].pop(name)


def _set_state(name, value):
    return lambda sd: sd["state"][0].__setitem__(name, value)


def _set_group(name, value):
    return lambda sd: sd["param_groups"][0].__setitem__(name, value)


def _adam_load(edit):
    return lambda: _load_edited(optim.Adam, edit)


def _sgd_load(edit):
    return lambda: _load_edited(optim.SGD, edit, momentum=0.9)


def _scheduler_load(edit):
    _, opt = _stepped(optim.SGD)
    sched = lr_scheduler.StepLR(opt, step_size=1)
    sd = sched.state_dict()
    edit(sd)
    sched.load_state_dict(sd)


def _onecycle_load_past_end():
    _, opt = _stepped(optim.SGD, momentum=0.9)
    sched = lr_scheduler.OneCycleLR(opt, 1.0, total_steps=10)
    sched.load_state_dict(dict(sched.state_dict(), last_epoch=100))


def _scaler_load(key, value):
    scaler = GradScaler("cpu")
    sd = scaler.state_dict()
    if value is None:
        del sd[key]
    else:
        sd[key] = value
    scaler.load_state_dict(sd)


def _clip(values, **kwargs):
    p = [_param(2), _param(2)]
    p[0].grad = wick.tensor(values)
    p[1].grad = wick.ones(2)
    return nn.utils.clip_grad_norm_(p, 1.0, **kwargs)


def _module_load(state):
    nn.Linear(2, 3).load_state_dict(state)


def _safetensors(name, header_bytes, data=b""):
    """A file holding a raw safetensors header (bytes) and data, padded to 8 bytes."""
    header_bytes += b" " * ((8 - len(header_bytes) % 8) % 8)
    path = _path(name)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)) + header_bytes + data)
    return path


def _tree_file(name, tree, tensors=None):
    """A wick.save file whose "wick.tree" metadata is replaced by `tree` (a string)."""
    path = _path(name)
    wick.save(tensors or {"w": wick.zeros(2)}, path)
    t, _ = wick._C._nn.load_safetensors(path)
    wick._C._nn.save_safetensors(path, t, {"wick.tree": tree})
    return path


def _tree(name, node):
    return lambda: wick.load(_tree_file(name, json.dumps(node)))


_MISSING_DIR = _path("no-such-dir")
_A_DIR = _path("a-directory")
os.makedirs(_A_DIR, exist_ok=True)
_BAD_UTF8 = _safetensors("bad-utf8.safetensors", b'{"w\xff": {"dtype": "F32"}}')
_BAD_UTF8_META = _safetensors("bad-utf8-meta.safetensors", b'{"__metadata__": {"k": "\xfe"}}')
_SHORT = _path("short.safetensors")
with open(_SHORT, "wb") as _f:
    _f.write(b"\x01\x02")
_PICKLED_OBJECT = _path("module.pt")  # a whole module, pickled: refused unless weights_only=False
wick.save(nn.Linear(2, 2), _PICKLED_OBJECT)

CASES = [
    # ---- optimizer constructors (the ranges load_state_dict enforces too) ----
    Bad("sgd-lr-negative", lambda: optim.SGD([_param(2)], lr=-1), ValueError, "SGD", ["-1"]),
    Bad("sgd-lr-nan", lambda: optim.SGD([_param(2)], lr=math.nan), ValueError, "SGD", ["nan"]),
    Bad("sgd-lr-inf", lambda: optim.SGD([_param(2)], lr=math.inf), ValueError, "SGD", ["inf"]),
    Bad("sgd-lr-string", lambda: optim.SGD([_param(2)], lr="fast"), TypeError, "SGD", ["'fast'"]),
    Bad("sgd-lr-missing", lambda: optim.SGD([_param(2)]), ValueError, "SGD", ["lr"]),
    Bad("sgd-momentum-negative", lambda: optim.SGD([_param(2)], lr=0.1, momentum=-0.5),
        ValueError, "SGD", ["-0.5"]),
    Bad("sgd-weight-decay-negative", lambda: optim.SGD([_param(2)], lr=0.1, weight_decay=-1),
        ValueError, "SGD", ["weight_decay", "-1"]),
    Bad("sgd-nesterov-no-momentum", lambda: optim.SGD([_param(2)], lr=0.1, nesterov=True),
        ValueError, "SGD", ["Nesterov", "momentum 0"]),
    Bad("sgd-nesterov-dampening", lambda: optim.SGD([_param(2)], lr=0.1, momentum=0.9,
                                                    dampening=0.5, nesterov=True),
        ValueError, "SGD", ["dampening 0.5"]),
    Bad("sgd-maximize", lambda: optim.SGD([_param(2)], lr=0.1, maximize=True), ValueError,
        "SGD", ["maximize"]),
    Bad("sgd-params-tensor", lambda: optim.SGD(_param(2), lr=0.1), TypeError, "SGD",
        ["got a Tensor"]),
    Bad("sgd-params-empty", lambda: optim.SGD([], lr=0.1), ValueError, "SGD", ["empty"]),
    Bad("sgd-params-int", lambda: optim.SGD([1], lr=0.1), TypeError, "SGD", ["int"]),
    Bad("sgd-params-non-leaf", lambda: optim.SGD([_param(2) * 2], lr=0.1), ValueError, "SGD",
        ["non-leaf"]),
    Bad("sgd-params-no-grad", lambda: optim.SGD([wick.zeros(2)], lr=0.1), ValueError, "SGD",
        ["does not require grad"]),
    Bad("sgd-params-duplicate-groups",
        lambda: (lambda p: optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1))(_param(2)),
        ValueError, "SGD", ["more than one parameter group"]),
    Bad("adam-lr-negative", lambda: optim.Adam([_param(2)], lr=-1e-3), ValueError, "Adam",
        ["-0.001"]),
    Bad("adam-beta1-one", lambda: optim.Adam([_param(2)], betas=(1.0, 0.9)), ValueError, "Adam",
        ["index 0: 1.0"]),
    Bad("adam-beta2-negative", lambda: optim.Adam([_param(2)], betas=(0.9, -1)), ValueError,
        "Adam", ["index 1: -1"]),
    Bad("adam-beta-nan", lambda: optim.Adam([_param(2)], betas=(math.nan, 0.9)), ValueError,
        "Adam", ["nan"]),
    Bad("adam-betas-one-value", lambda: optim.Adam([_param(2)], betas=(0.9,)), TypeError, "Adam",
        ["(0.9,)"]),
    Bad("adam-eps-negative", lambda: optim.Adam([_param(2)], eps=-1e-8), ValueError, "Adam",
        ["-1e-08"]),
    Bad("adam-weight-decay-negative", lambda: optim.Adam([_param(2)], weight_decay=-0.1),
        ValueError, "Adam", ["-0.1"]),
    Bad("adam-amsgrad", lambda: optim.Adam([_param(2)], amsgrad=True), ValueError, "Adam",
        ["amsgrad"]),
    Bad("adamw-weight-decay-negative", lambda: optim.AdamW([_param(2)], weight_decay=-0.01),
        ValueError, "AdamW", ["-0.01"]),
    Bad("adamw-lr-nan", lambda: optim.AdamW([_param(2)], lr=math.nan), ValueError, "AdamW",
        ["nan"]),
    Bad("adamw-lr-string", lambda: optim.AdamW([_param(2)], lr="1e-3"), TypeError, "AdamW",
        ["'1e-3'"]),
    # ---- add_param_group ----
    Bad("add-group-duplicate",
        lambda: (lambda p: optim.SGD([p], lr=0.1).add_param_group({"params": [p]}))(_param(2)),
        ValueError, "SGD", ["more than one parameter group"]),
    Bad("add-group-lr-negative",
        lambda: optim.SGD([_param(2)], lr=0.1).add_param_group({"params": [_param(1)], "lr": -2}),
        ValueError, "SGD", ["group 1", "-2"]),
    Bad("add-group-momentum-nan",
        lambda: optim.SGD([_param(2)], lr=0.1).add_param_group(
            {"params": [_param(1)], "momentum": math.nan}),
        ValueError, "SGD", ["group 1", "momentum nan"]),
    Bad("add-group-betas-out-of-range",
        lambda: optim.Adam([_param(2)]).add_param_group(
            {"params": [_param(1)], "betas": (0.9, 1.5)}),
        ValueError, "Adam", ["1.5"]),
    Bad("add-group-lr-string",
        lambda: optim.SGD([_param(2)], lr=0.1).add_param_group({"params": [_param(1)],
                                                                "lr": "x"}),
        TypeError, "optimizer", ["'lr'", "'x'"]),
    Bad("add-group-no-params", lambda: optim.SGD([_param(2)], lr=0.1).add_param_group({"lr": 1}),
        KeyError, "SGD", ["'params'"]),
    Bad("add-group-not-dict", lambda: optim.SGD([_param(2)], lr=0.1).add_param_group([_param(1)]),
        TypeError, "SGD", ["list"]),
    # ---- step(): parameter, gradient and state must agree ----
    Bad("sgd-momentum-param-grown", lambda: _resized_step(optim.SGD, (5,), momentum=0.9),
        RuntimeError, "SGD", ["parameter 0", "(5,)", "(3,)"]),
    Bad("sgd-momentum-param-shrunk", lambda: _resized_step(optim.SGD, (2,), momentum=0.9),
        RuntimeError, "SGD", ["parameter 0", "(2,)", "(3,)"]),
    Bad("adam-param-grown", lambda: _resized_step(optim.Adam, (5,)), RuntimeError, "Adam",
        ["parameter 0", "(5,)", "(3,)"]),
    Bad("adam-param-shrunk-by-one", lambda: _resized_step(optim.Adam, (2,)), RuntimeError, "Adam",
        ["(2,)", "(3,)"]),
    Bad("adamw-param-grown", lambda: _resized_step(optim.AdamW, (4,)), RuntimeError, "AdamW",
        ["(4,)", "(3,)"]),
    Bad("adam-param-reshaped", lambda: _reshaped_step(optim.Adam), RuntimeError, "Adam",
        ["(4, 3)", "(3, 4)"]),
    Bad("sgd-momentum-param-reshaped", lambda: _reshaped_step(optim.SGD, momentum=0.5),
        RuntimeError, "SGD", ["(4, 3)"]),
    Bad("grad-float64-on-float32", lambda: _set_grad(wick.zeros(3, dtype=wick.float64)),
        RuntimeError, "set_grad", ["different type", "float64"]),
    Bad("grad-int64-on-float32", lambda: _set_grad(wick.zeros(3, dtype=wick.int64)),
        RuntimeError, "set_grad", ["int64"]),
    Bad("grad-wrong-size", lambda: _set_grad(wick.zeros(4)), RuntimeError, "set_grad",
        ["different size", "(4,)"]),
    Bad("grad-wrong-rank", lambda: _set_grad(wick.zeros(3, 1)), RuntimeError, "set_grad",
        ["(3, 1)"]),
    Bad("grad-not-a-tensor", lambda: _set_grad(3), TypeError, "grad", ["int"]),
    # ---- optimizer load_state_dict: validated whole before anything changes ----
    Bad("adam-load-missing-exp-avg-sq", _adam_load(_del_state("exp_avg_sq")), ValueError, "Adam",
        ["parameter 0", "'exp_avg_sq'"]),
    Bad("adam-load-missing-exp-avg", _adam_load(_del_state("exp_avg")), ValueError, "Adam",
        ["'exp_avg'"]),
    Bad("adam-load-missing-step", _adam_load(_del_state("step")), ValueError, "Adam", ["'step'"]),
    Bad("adam-load-lr-nan", _adam_load(_set_group("lr", math.nan)), ValueError, "Adam",
        ["learning rate nan"]),
    Bad("adam-load-lr-negative", _adam_load(_set_group("lr", -0.5)), ValueError, "Adam",
        ["-0.5"]),
    Bad("adam-load-step-negative", _adam_load(_set_state("step", wick.tensor(-5.0))), ValueError,
        "Adam", ["-5"]),
    Bad("adam-load-step-fraction", _adam_load(_set_state("step", 2.5)), ValueError, "Adam",
        ["2.5"]),
    Bad("adam-load-step-nan", _adam_load(_set_state("step", math.nan)), ValueError, "Adam",
        ["nan"]),
    Bad("adam-load-beta2-negative", _adam_load(_set_group("betas", (0.9, -1.0))), ValueError,
        "Adam", ["(0.9, -1)"]),
    Bad("adam-load-beta1-one", _adam_load(_set_group("betas", (1.0, 0.999))), ValueError, "Adam",
        ["(1, 0.999)"]),
    Bad("adam-load-betas-string", _adam_load(_set_group("betas", "ab")), TypeError, "optimizer",
        ["betas", "'ab'"]),
    Bad("adam-load-eps-negative", _adam_load(_set_group("eps", -1.0)), ValueError, "Adam",
        ["epsilon -1"]),
    Bad("adam-load-weight-decay-negative", _adam_load(_set_group("weight_decay", -1.0)),
        ValueError, "Adam", ["weight_decay -1"]),
    Bad("adam-load-lr-string", _adam_load(_set_group("lr", "0.1")), TypeError, "optimizer",
        ["'lr'", "'0.1'"]),
    Bad("adam-load-exp-avg-wrong-shape", _adam_load(_set_state("exp_avg", wick.zeros(4))),
        ValueError, "Adam", ["(4,)", "(3,)"]),
    Bad("adam-load-exp-avg-scalar", _adam_load(_set_state("exp_avg", wick.tensor(0.0))),
        ValueError, "Adam", ["'state.0.exp_avg' has shape ()"]),
    Bad("adam-load-exp-avg-int", _adam_load(_set_state("exp_avg", wick.zeros(3,
                                                                             dtype=wick.int64))),
        TypeError, "Adam", ["int64"]),
    Bad("adam-load-state-string", _adam_load(_set_state("exp_avg", "zeros")), TypeError, "Adam",
        ["exp_avg", "str"]),
    Bad("adam-load-unknown-entry", _adam_load(_set_state("momentum_buffer", wick.zeros(3))),
        ValueError, "Adam", ["momentum_buffer"]),
    Bad("adam-load-state-index-out-of-range",
        _adam_load(lambda sd: sd["state"].__setitem__(7, dict(sd["state"][0]))), ValueError,
        "Adam", ["parameter 7", "has 1"]),
    Bad("adam-load-state-index-string",
        _adam_load(lambda sd: sd["state"].__setitem__("0", sd["state"].pop(0))), TypeError,
        "Adam", ["'0'"]),
    Bad("adam-load-two-groups-for-one",
        _adam_load(lambda sd: sd["param_groups"].append(dict(sd["param_groups"][0]))),
        ValueError, "Adam", ["number of parameter groups", "2"]),
    Bad("adam-load-group-size",
        _adam_load(lambda sd: sd["param_groups"][0].__setitem__("params", [0, 1])), ValueError,
        "Adam", ["2 parameters", "has 1"]),
    Bad("adam-load-no-param-groups", _adam_load(lambda sd: sd.pop("param_groups")), KeyError,
        "Adam", ["param_groups"]),
    Bad("adam-load-no-state", _adam_load(lambda sd: sd.pop("state")), KeyError, "Adam",
        ["'state'"]),
    Bad("adam-load-not-a-dict", lambda: optim.Adam([_param(2)]).load_state_dict([1, 2]),
        TypeError, "Adam", ["list"]),
    Bad("adam-load-groups-not-list",
        _adam_load(lambda sd: sd.__setitem__("param_groups", 3)), TypeError, "Adam", ["int"]),
    Bad("adamw-load-missing-exp-avg-sq", lambda: _load_edited(optim.AdamW,
                                                              _del_state("exp_avg_sq")),
        ValueError, "AdamW", ["exp_avg_sq"]),
    Bad("sgd-load-momentum-negative", _sgd_load(_set_group("momentum", -0.9)), ValueError, "SGD",
        ["momentum -0.9"]),
    Bad("sgd-load-weight-decay-nan", _sgd_load(_set_group("weight_decay", math.nan)), ValueError,
        "SGD", ["weight_decay nan"]),
    Bad("sgd-load-nesterov-dampening",
        _sgd_load(lambda sd: sd["param_groups"][0].update(nesterov=True, dampening=0.5)),
        ValueError, "SGD", ["Nesterov", "dampening 0.5"]),
    Bad("sgd-load-buffer-wrong-shape", _sgd_load(_set_state("momentum_buffer", wick.zeros(2, 2))),
        ValueError, "SGD", ["momentum_buffer", "(2, 2)"]),
    Bad("sgd-load-adam-state", _sgd_load(_set_state("exp_avg", wick.zeros(3))), ValueError,
        "SGD", ["exp_avg"]),
    # ---- schedulers ----
    Bad("steplr-step-size-zero", lambda: lr_scheduler.StepLR(_stepped(optim.SGD)[1], 0),
        ValueError, "StepLR", ["0"]),
    Bad("cosine-t-max-zero", lambda: lr_scheduler.CosineAnnealingLR(_stepped(optim.SGD)[1], 0),
        ValueError, "CosineAnnealingLR", ["0"]),
    Bad("linearlr-end-factor", lambda: lr_scheduler.LinearLR(_stepped(optim.SGD)[1],
                                                              end_factor=2.0),
        ValueError, "LinearLR", ["2"]),
    Bad("onecycle-total-steps-zero",
        lambda: lr_scheduler.OneCycleLR(_stepped(optim.SGD, momentum=0.9)[1], 1.0, total_steps=0),
        ValueError, "OneCycleLR", ["0"]),
    Bad("onecycle-pct-start", lambda: lr_scheduler.OneCycleLR(
        _stepped(optim.SGD, momentum=0.9)[1], 1.0, total_steps=10, pct_start=2.0),
        ValueError, "OneCycleLR", ["2"]),
    Bad("scheduler-step-epoch", lambda: lr_scheduler.StepLR(_stepped(optim.SGD)[1], 1).step(3),
        ValueError, "StepLR.step", ["step(epoch)"]),
    Bad("scheduler-load-negative-epoch",
        lambda: _scheduler_load(lambda sd: sd.__setitem__("last_epoch", -3)), ValueError,
        "LRScheduler", ["-3"]),
    Bad("scheduler-load-base-lrs-count",
        lambda: _scheduler_load(lambda sd: sd.__setitem__("base_lrs", [0.1, 0.2])), ValueError,
        "LRScheduler", ["(2,)", "1 parameter groups"]),
    Bad("scheduler-load-base-lr-nan",
        lambda: _scheduler_load(lambda sd: sd.__setitem__("base_lrs", [math.nan])), ValueError,
        "LRScheduler", ["nan"]),
    Bad("scheduler-load-fractional-epoch",
        lambda: _scheduler_load(lambda sd: sd.__setitem__("last_epoch", 1.5)), ValueError,
        "LRScheduler", ["1.5"]),
    Bad("onecycle-load-past-total-steps", lambda: _onecycle_load_past_end(), ValueError,
        "OneCycleLR", ["total_steps is 10"]),
    Bad("scheduler-load-missing-key", lambda: _scheduler_load(lambda sd: sd.pop("base_lrs")),
        KeyError, "StepLR.load_state_dict", ["base_lrs"]),
    # ---- clip_grad_norm_ ----
    Bad("clip-nan-error-if-nonfinite", lambda: _clip([math.nan, 1.0], error_if_nonfinite=True),
        RuntimeError, "clip_grad_norm_", ["nan"]),
    Bad("clip-inf-error-if-nonfinite", lambda: _clip([math.inf, 1.0], error_if_nonfinite=True),
        RuntimeError, "clip_grad_norm_", ["inf"]),
    Bad("clip-norm-type-string", lambda: _clip([1.0, 1.0], norm_type="fro"), ValueError,
        "clip_grad_norm_", ["'fro'"]),
    Bad("clip-norm-type-zero", lambda: _clip([1.0, 1.0], norm_type=0), ValueError,
        "clip_grad_norm_", ["0"]),
    Bad("clip-max-norm-negative", lambda: nn.utils.clip_grad_norm_([_param(2)], -1.0),
        ValueError, "clip_grad_norm_", ["-1"]),
    # ---- GradScaler ----
    Bad("scaler-init-scale-negative", lambda: GradScaler("cpu", init_scale=-1.0), ValueError,
        "GradScaler", ["-1"]),
    Bad("scaler-growth-factor", lambda: GradScaler("cpu", growth_factor=0.5), ValueError, "GradScaler",
        ["0.5"]),
    Bad("scaler-backoff-factor", lambda: GradScaler("cpu", backoff_factor=2.0), ValueError, "GradScaler",
        ["2"]),
    Bad("scaler-growth-interval", lambda: GradScaler("cpu", growth_interval=0), ValueError, "GradScaler",
        ["0"]),
    Bad("scaler-load-scale-nan", lambda: _scaler_load("scale", math.nan), ValueError,
        "GradScaler.load_state_dict", ["nan"]),
    Bad("scaler-load-backoff", lambda: _scaler_load("backoff_factor", 1.5), ValueError,
        "GradScaler.load_state_dict", ["1.5"]),
    Bad("scaler-load-missing", lambda: _scaler_load("growth_interval", None), KeyError,
        "GradScaler", ["growth_interval"]),
    # ---- module load_state_dict ----
    Bad("module-load-missing-key", lambda: _module_load({"weight": wick.zeros(3, 2)}),
        RuntimeError, "Linear", ["Missing", '"bias"']),
    Bad("module-load-unexpected-key", lambda: _module_load(
        {"weight": wick.zeros(3, 2), "bias": wick.zeros(3), "scale": wick.zeros(1)}),
        RuntimeError, "Linear", ["Unexpected", '"scale"']),
    Bad("module-load-size-mismatch", lambda: _module_load(
        {"weight": wick.zeros(3, 3), "bias": wick.zeros(3)}), RuntimeError, "Linear",
        ["size mismatch for weight", "[3, 3]", "[3, 2]"]),
    Bad("module-load-all-problems", lambda: _module_load(
        {"weight": wick.zeros(2, 2), "x": wick.zeros(1)}), RuntimeError, "Linear",
        ['"bias"', '"x"', "size mismatch for weight"]),
    Bad("module-load-not-a-dict", lambda: _module_load(3), TypeError, "state_dict", ["int"]),
    Bad("module-load-value-not-tensor", lambda: _module_load({"weight": 3,
                                                              "bias": wick.zeros(3)}),
        RuntimeError, "Linear", ['"weight"', "int"]),
    # ---- wick.save / wick.load: the file system ----
    Bad("load-missing-file", lambda: wick.load(_path("missing.pt")), FileNotFoundError,
        "load_safetensors", ["missing.pt", "No such file"]),
    Bad("load-missing-dir", lambda: wick.load(os.path.join(_MISSING_DIR, "x.pt")),
        FileNotFoundError, "load_safetensors", ["no-such-dir"]),
    Bad("load-directory", lambda: wick.load(_A_DIR), IsADirectoryError, "load_safetensors",
        ["a-directory", "Is a directory"]),
    Bad("save-missing-dir", lambda: wick.save({"w": wick.zeros(1)},
                                              os.path.join(_MISSING_DIR, "x.pt")),
        FileNotFoundError, "save_safetensors", ["no-such-dir"]),
    Bad("save-onto-directory", lambda: wick.save({"w": wick.zeros(1)}, _A_DIR),
        IsADirectoryError, "save_safetensors", ["a-directory"]),
    Bad("load-not-a-path", lambda: wick.load(42), TypeError, "wick.load", ["int"]),
    Bad("save-not-a-path", lambda: wick.save({}, 42), TypeError, "wick.save", ["int"]),
    # Objects that are not containers are pickled (wick.save of whole objects); what pickle itself
    # refuses - a lambda, a generator - is a TypeError naming what could not be pickled.
    Bad("save-unpicklable-lambda", lambda: wick.save({"f": lambda: 0}, _path("fn.pt")), TypeError,
        "wick.save", ["dict", "lambda"]),
    Bad("save-unpicklable-generator", lambda: wick.save([(i for i in ())], _path("gen.pt")),
        TypeError, "wick.save", ["generator"]),
    Bad("load-pickle-weights-only", lambda: wick.load(_PICKLED_OBJECT), pickle.UnpicklingError,
        "wick.load", ["weights_only", "Linear"]),
    # ---- wick.load: corrupt contents ----
    Bad("load-non-utf8-key", lambda: wick.load(_BAD_UTF8), ValueError, "load_safetensors",
        ["bad-utf8.safetensors", "\\xff"]),
    Bad("load-non-utf8-metadata", lambda: wick.load(_BAD_UTF8_META), ValueError,
        "load_safetensors", ["\\xfe"]),
    Bad("load-too-short", lambda: wick.load(_SHORT), ValueError, "load_safetensors",
        ["short.safetensors", "2 bytes"]),
    Bad("load-tree-not-json", lambda: wick.load(_tree_file("tree-json.pt", "{not json")),
        ValueError, "wick.load", ["tree-json.pt", "not valid JSON"]),
    Bad("load-tree-int", _tree("tree-int.pt", 5), ValueError, "wick.load",
        ["tree-int.pt", "5"]),
    Bad("load-tree-unknown-tensor", _tree("tree-tensor.pt", {"t": "nope"}), ValueError,
        "wick.load", ["tree-tensor.pt", "'nope'"]),
    Bad("load-tree-dict-items-int", _tree("tree-items.pt", {"d": 3}), ValueError, "wick.load",
        ["tree-items.pt", "3"]),
    Bad("load-tree-bad-item", _tree("tree-item.pt", {"d": [["k", {"v": 1}]]}), ValueError,
        "wick.load", ["tree-item.pt", "item 0"]),
    Bad("load-tree-value-object", _tree("tree-value.pt", {"v": {"a": 1}}), ValueError,
        "wick.load", ["tree-value.pt", '{"a": 1}']),
    Bad("load-tree-no-known-key", _tree("tree-keys.pt", {"x": 1}), ValueError, "wick.load",
        ["tree-keys.pt", "none of the keys"]),
    Bad("load-tree-list-not-list", _tree("tree-list.pt", {"l": {"a": 1}}), ValueError,
        "wick.load", ["tree-list.pt", "list values"]),
    # ---- seeds (torch.Generator.manual_seed's rules: integers in [-2**63, 2**64)) ----
    Bad("seed-float", lambda: wick.manual_seed(1.5), RuntimeError, "manual_seed",
        ["float", "1.5"]),
    Bad("seed-integral-float", lambda: wick.manual_seed(2.0), RuntimeError, "manual_seed",
        ["2.0"]),
    Bad("seed-nan", lambda: wick.manual_seed(math.nan), RuntimeError, "manual_seed", ["nan"]),
    Bad("seed-string", lambda: wick.manual_seed("42"), RuntimeError, "manual_seed",
        ["str", "'42'"]),
    Bad("seed-bool", lambda: wick.manual_seed(True), RuntimeError, "manual_seed", ["True"]),
    Bad("seed-none", lambda: wick.manual_seed(None), RuntimeError, "manual_seed", ["None"]),
    Bad("seed-too-large", lambda: wick.manual_seed(2**64), RuntimeError, "manual_seed",
        ["18446744073709551616"]),
    Bad("seed-too-negative", lambda: wick.manual_seed(-2**63 - 1), RuntimeError, "manual_seed",
        ["-9223372036854775809"]),
    Bad("rng-state-float", lambda: wick.set_rng_state((1.5, 0)), RuntimeError, "set_rng_state",
        ["1.5"]),
    Bad("rng-state-one-value", lambda: wick.set_rng_state((1,)), ValueError, "set_rng_state",
        ["1 values"]),
]


@parametrize(CASES)
def test_bad_input(case):
    check(case)
