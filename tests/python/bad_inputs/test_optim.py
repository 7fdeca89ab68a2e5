"""Bad inputs to the newer optimizers (RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, LBFGS)
and learning-rate schedules (ReduceLROnPlateau, OneCycleLR, CyclicLR, LambdaLR, SequentialLR,
CosineAnnealingWarmRestarts, ...). SGD, Adam and AdamW, StepLR and the schedulers'
load_state_dict are in test_state.py.

How the types were checked: each row was run against torch.optim 1.13 (Debian's torch,
/work/main/.venv). Constructor ranges are PyTorch's ValueErrors, word for word after the
"[Optimizer]" prefix; a parameter resized after the optimizer has state is PyTorch's RuntimeError
(there a broadcasting failure, here a message naming the parameter and the state). Where PyTorch
accepts the mistake (LBFGS(lr=-1), history_size=0, a negative T_max, a NaN from lr_lambda) or
fails by accident (AttributeError for a scheduler given a string, KeyError for a missing state
entry, float()'s messages for a closure returning None), the row has Python's convention:
ValueError for a bad value, TypeError for a wrong type."""

import math

import wick
from wick import nn, optim
from wick.optim import lr_scheduler as L

from bad_inputs.corpus import Bad, check, parametrize


def _params():
    return [nn.Parameter(wick.ones(3))]


def _sgd(**kwargs):
    return optim.SGD(_params(), lr=0.1, **kwargs)


def _resized_step(kind, **kwargs):
    p = _params()
    o = kind(p, **kwargs)
    p[0].grad = wick.ones(3)
    o.step()
    p[0].data = wick.ones(2, 2)
    p[0].grad = wick.ones(2, 2)
    o.step()


def _load_edited(kind, edit, **kwargs):
    p = _params()
    o = kind(p, **kwargs)
    p[0].grad = wick.ones(3)
    o.step()
    sd = o.state_dict()
    edit(sd)
    o.load_state_dict(sd)


def _drop(key):
    return lambda sd: sd["state"][0].pop(key)


def _group(key, value):
    return lambda sd: sd["param_groups"][0].__setitem__(key, value)


def _lbfgs_step(closure_result):
    p = _params()
    o = optim.LBFGS(p)
    return o.step(lambda: closure_result(p, o))


def _vector_loss(p, o):
    o.zero_grad()
    loss = p[0] ** 2
    loss.sum().backward()
    return loss


def _raise(error):
    raise error


def _lbfgs_load_history_0():
    p = _params()
    o = optim.LBFGS(p)

    def closure():
        o.zero_grad()
        loss = (p[0] ** 2).sum()
        loss.backward()
        return loss

    o.step(closure)
    sd = o.state_dict()
    sd["param_groups"][0]["history_size"] = 0
    o.load_state_dict(sd)


def _plateau_load(key, value):
    s = L.ReduceLROnPlateau(_sgd())
    sd = s.state_dict()
    sd[key] = value
    s.load_state_dict(sd)


def _lambda_step(fn):
    s = L.LambdaLR(_sgd(), fn)
    s.optimizer.step()
    s.step()


def _onecycle_past_end():
    s = L.OneCycleLR(_sgd(momentum=0.9), 1.0, total_steps=3)
    for _ in range(5):
        s.optimizer.step()
        s.step()


def _sequential(make_second, milestones=(1,)):
    o = _sgd()
    return L.SequentialLR(o, [L.StepLR(o, 1), make_second(o)], milestones=list(milestones))


OPTIMIZERS = [
    Bad("rmsprop-lr-negative", lambda: optim.RMSprop(_params(), lr=-1), ValueError, "RMSprop",
        ["learning rate: -1"]),
    Bad("rmsprop-alpha-negative", lambda: optim.RMSprop(_params(), alpha=-0.5), ValueError,
        "RMSprop", ["alpha value: -0.5"]),
    Bad("rmsprop-eps-negative", lambda: optim.RMSprop(_params(), eps=-1e-8), ValueError,
        "RMSprop", ["epsilon value: -1e-08"]),
    Bad("rmsprop-momentum-negative", lambda: optim.RMSprop(_params(), momentum=-0.1), ValueError,
        "RMSprop", ["momentum value: -0.1"]),
    Bad("rmsprop-weight-decay-negative", lambda: optim.RMSprop(_params(), weight_decay=-0.1),
        ValueError, "RMSprop", ["weight_decay value: -0.1"]),
    Bad("rmsprop-lr-str", lambda: optim.RMSprop(_params(), lr="0.1"), TypeError, "RMSprop",
        ["'0.1'"]),
    Bad("rmsprop-lr-nan", lambda: optim.RMSprop(_params(), lr=math.nan), ValueError, "RMSprop",
        ["nan"]),
    Bad("adagrad-lr-decay-negative", lambda: optim.Adagrad(_params(), lr_decay=-1), ValueError,
        "Adagrad", ["lr_decay value: -1"]),
    Bad("adagrad-initial-accumulator-negative",
        lambda: optim.Adagrad(_params(), initial_accumulator_value=-1), ValueError, "Adagrad",
        ["initial_accumulator_value value: -1"]),
    Bad("adagrad-eps-negative", lambda: optim.Adagrad(_params(), eps=-1), ValueError, "Adagrad",
        ["epsilon value: -1"]),
    Bad("adadelta-rho-above-1", lambda: optim.Adadelta(_params(), rho=1.5), ValueError,
        "Adadelta", ["rho value: 1.5"]),
    Bad("adadelta-rho-negative", lambda: optim.Adadelta(_params(), rho=-0.1), ValueError,
        "Adadelta", ["rho value: -0.1"]),
    Bad("adadelta-lr-negative", lambda: optim.Adadelta(_params(), lr=-1), ValueError,
        "Adadelta", ["learning rate: -1"]),
    Bad("adamax-beta1-one", lambda: optim.Adamax(_params(), betas=(1.0, 0.9)), ValueError,
        "Adamax", ["index 0: 1.0"]),
    Bad("adamax-eps-negative", lambda: optim.Adamax(_params(), eps=-1), ValueError, "Adamax",
        ["epsilon value: -1"]),
    Bad("nadam-momentum-decay-negative", lambda: optim.NAdam(_params(), momentum_decay=-1),
        ValueError, "NAdam", ["momentum_decay value: -1"]),
    Bad("nadam-beta2-negative", lambda: optim.NAdam(_params(), betas=(0.9, -0.1)), ValueError,
        "NAdam", ["index 1: -0.1"]),
    Bad("radam-eps-negative", lambda: optim.RAdam(_params(), eps=-1), ValueError, "RAdam",
        ["epsilon value: -1"]),
    Bad("radam-weight-decay-negative", lambda: optim.RAdam(_params(), weight_decay=-1),
        ValueError, "RAdam", ["weight_decay value: -1"]),
    Bad("rmsprop-param-resized", lambda: _resized_step(optim.RMSprop, momentum=0.9,
                                                       centered=True),
        RuntimeError, "RMSprop", ["parameter 0", "(2, 2)", "(3,)"]),
    Bad("adagrad-param-resized", lambda: _resized_step(optim.Adagrad), RuntimeError, "Adagrad",
        ["'sum'", "(2, 2)"]),
    Bad("adadelta-param-resized", lambda: _resized_step(optim.Adadelta), RuntimeError,
        "Adadelta", ["'square_avg'"]),
    Bad("nadam-param-resized", lambda: _resized_step(optim.NAdam), RuntimeError, "NAdam",
        ["'exp_avg'"]),
    Bad("radam-param-resized", lambda: _resized_step(optim.RAdam), RuntimeError, "RAdam",
        ["(2, 2)"]),
    Bad("adamax-param-resized", lambda: _resized_step(optim.Adamax), RuntimeError, "Adamax",
        ["(2, 2)"]),
    Bad("rmsprop-load-missing-square-avg", lambda: _load_edited(optim.RMSprop,
                                                                _drop("square_avg")),
        ValueError, "RMSprop", ["'square_avg'"]),
    Bad("rmsprop-load-state-shape", lambda: _load_edited(
        optim.RMSprop, lambda sd: sd["state"][0].__setitem__("square_avg", wick.ones(4))),
        ValueError, "RMSprop", ["(4,)", "(3,)"]),
    Bad("rmsprop-load-lr-negative", lambda: _load_edited(optim.RMSprop, _group("lr", -1.0)),
        ValueError, "RMSprop", ["learning rate -1"]),
    Bad("adagrad-load-missing-sum", lambda: _load_edited(optim.Adagrad, _drop("sum")),
        ValueError, "Adagrad", ["'sum'"]),
    Bad("adadelta-load-missing-acc-delta", lambda: _load_edited(optim.Adadelta,
                                                                _drop("acc_delta")),
        ValueError, "Adadelta", ["'acc_delta'"]),
    Bad("adadelta-load-rho-2", lambda: _load_edited(optim.Adadelta, _group("rho", 2.0)),
        ValueError, "Adadelta", ["rho", "2"]),
    Bad("nadam-load-missing-mu-product", lambda: _load_edited(optim.NAdam, _drop("mu_product")),
        ValueError, "NAdam", ["'mu_product'"]),
    Bad("adamax-load-missing-exp-inf", lambda: _load_edited(optim.Adamax, _drop("exp_inf")),
        ValueError, "Adamax", ["'exp_inf'"]),
    Bad("lbfgs-lr-negative", lambda: optim.LBFGS(_params(), lr=-1), ValueError, "LBFGS",
        ["learning rate: -1"]),
    Bad("lbfgs-max-iter-0", lambda: optim.LBFGS(_params(), max_iter=0), ValueError, "LBFGS",
        ["max_iter", "0"]),
    Bad("lbfgs-history-0", lambda: optim.LBFGS(_params(), history_size=0), ValueError, "LBFGS",
        ["history_size", "0"]),
    Bad("lbfgs-line-search", lambda: optim.LBFGS(_params(), line_search_fn="armijo"),
        RuntimeError, "strong_wolfe", ["'armijo'"]),
    Bad("lbfgs-two-groups", lambda: optim.LBFGS([{"params": _params()}, {"params": _params()}]),
        ValueError, "LBFGS", ["parameter groups"]),
    Bad("lbfgs-add-param-group", lambda: optim.LBFGS(_params()).add_param_group(
        {"params": _params()}), ValueError, "LBFGS", ["parameter groups"]),
    Bad("lbfgs-step-without-closure", lambda: optim.LBFGS(_params()).step(), TypeError,
        "LBFGS.step", ["closure"]),
    # silent: float(None)'s "float() argument must be a string or a real number".
    Bad("lbfgs-closure-returns-none", lambda: _lbfgs_step(lambda p, o: None), TypeError,
        "LBFGS.step", ["the loss", "None"]),
    Bad("lbfgs-closure-returns-vector", lambda: _lbfgs_step(_vector_loss), ValueError,
        "LBFGS.step", ["(3,)"]),
    Bad("lbfgs-load-history-0", _lbfgs_load_history_0, ValueError, "LBFGS",
        ["history_size", "0"]),
]

SCHEDULES = [
    # silent: AttributeError "'str' object has no attribute 'param_groups'".
    Bad("steplr-not-an-optimizer", lambda: L.StepLR("opt", 1), TypeError, "StepLR",
        ["str is not an Optimizer"]),
    Bad("plateau-not-an-optimizer", lambda: L.ReduceLROnPlateau("opt"), TypeError,
        "ReduceLROnPlateau", ["str is not an Optimizer"]),
    Bad("plateau-factor-1", lambda: L.ReduceLROnPlateau(_sgd(), factor=1.0), ValueError,
        "ReduceLROnPlateau", ["< 1.0", "1.0"]),
    Bad("plateau-mode", lambda: L.ReduceLROnPlateau(_sgd(), mode="up"), ValueError,
        "ReduceLROnPlateau", ["mode up"]),
    Bad("plateau-threshold-mode", lambda: L.ReduceLROnPlateau(_sgd(), threshold_mode="pct"),
        ValueError, "ReduceLROnPlateau", ["pct"]),
    Bad("plateau-min-lr-count", lambda: L.ReduceLROnPlateau(_sgd(), min_lr=[0.1, 0.2]),
        ValueError, "ReduceLROnPlateau", ["1 min_lrs, got 2"]),
    Bad("plateau-step-none", lambda: L.ReduceLROnPlateau(_sgd()).step(None), TypeError,
        "ReduceLROnPlateau.step", ["None"]),
    Bad("plateau-step-vector", lambda: L.ReduceLROnPlateau(_sgd()).step(wick.ones(3)),
        ValueError, "ReduceLROnPlateau.step", ["(3,)"]),
    Bad("plateau-step-epoch", lambda: L.ReduceLROnPlateau(_sgd()).step(1.0, 3), ValueError,
        "ReduceLROnPlateau.step", ["step(metrics, epoch)"]),
    Bad("plateau-load-not-a-dict", lambda: L.ReduceLROnPlateau(_sgd()).load_state_dict(3),
        TypeError, "ReduceLROnPlateau.load_state_dict", ["int"]),
    Bad("plateau-load-missing-counters",
        lambda: L.ReduceLROnPlateau(_sgd()).load_state_dict({"best": 1.0}), KeyError,
        "ReduceLROnPlateau.load_state_dict", ["num_bad_epochs"]),
    Bad("plateau-load-factor-2", lambda: _plateau_load("factor", 2.0), ValueError,
        "ReduceLROnPlateau", ["got 2"]),
    Bad("plateau-load-mode", lambda: _plateau_load("mode", "up"), ValueError,
        "ReduceLROnPlateau", ["mode up"]),
    Bad("plateau-load-bad-epochs-negative", lambda: _plateau_load("num_bad_epochs", -3),
        ValueError, "ReduceLROnPlateau", ["num_bad_epochs", "-3"]),
    # silent: float('x')'s "could not convert string to float".
    Bad("plateau-load-best-str", lambda: _plateau_load("best", "x"), TypeError,
        "ReduceLROnPlateau.load_state_dict", ["'best'", "'x'"]),
    Bad("plateau-load-min-lrs-count", lambda: _plateau_load("min_lrs", [0.1, 0.1]), ValueError,
        "ReduceLROnPlateau", ["1 min_lrs, got 2"]),
    Bad("onecycle-no-length", lambda: L.OneCycleLR(_sgd(momentum=0.9), 1.0), ValueError,
        "OneCycleLR", ["total_steps OR (epochs AND steps_per_epoch)"]),
    Bad("onecycle-epochs-0", lambda: L.OneCycleLR(_sgd(momentum=0.9), 1.0, epochs=0,
                                                  steps_per_epoch=10),
        ValueError, "OneCycleLR", ["epochs, but got 0"]),
    Bad("onecycle-steps-per-epoch-negative", lambda: L.OneCycleLR(
        _sgd(momentum=0.9), 1.0, epochs=2, steps_per_epoch=-1), ValueError, "OneCycleLR",
        ["steps_per_epoch, but got -1"]),
    # silent: pybind11's overload dump for wick._C._optim.OneCycleLR.
    Bad("onecycle-total-steps-float", lambda: L.OneCycleLR(_sgd(momentum=0.9), 1.0,
                                                           total_steps=10.5),
        ValueError, "OneCycleLR", ["total_steps, but got 10.5"]),
    Bad("onecycle-anneal-strategy", lambda: L.OneCycleLR(_sgd(momentum=0.9), 1.0, total_steps=10,
                                                         anneal_strategy="exp"),
        ValueError, "OneCycleLR", ["'exp'"]),
    Bad("onecycle-stepped-past-end", _onecycle_past_end, ValueError, "OneCycleLR",
        ["total_steps is 3"]),
    Bad("onecycle-no-momentum", lambda: L.OneCycleLR(optim.Adagrad(_params()), 1.0,
                                                     total_steps=10),
        ValueError, "OneCycleLR", ["momentum"]),
    Bad("cyclic-no-momentum", lambda: L.CyclicLR(optim.Adagrad(_params()), 0.01, 0.1),
        ValueError, "CyclicLR", ["Adagrad"]),
    Bad("cyclic-mode", lambda: L.CyclicLR(_sgd(momentum=0.9), 0.01, 0.1, mode="sine"),
        ValueError, "CyclicLR", ["'sine'"]),
    Bad("cyclic-step-size-0", lambda: L.CyclicLR(_sgd(momentum=0.9), 0.01, 0.1,
                                                 step_size_up=0),
        ValueError, "CyclicLR", ["step_size_up 0"]),
    Bad("cyclic-base-lr-count", lambda: L.CyclicLR(_sgd(momentum=0.9), [0.01, 0.02], 0.1),
        ValueError, "CyclicLR", ["1 values for base_lr, got 2"]),
    Bad("warm-restarts-t0-0", lambda: L.CosineAnnealingWarmRestarts(_sgd(), 0), ValueError,
        "CosineAnnealingWarmRestarts", ["T_0, but got 0"]),
    Bad("warm-restarts-t0-float", lambda: L.CosineAnnealingWarmRestarts(_sgd(), 1.5), ValueError,
        "CosineAnnealingWarmRestarts", ["1.5"]),
    Bad("warm-restarts-tmult-0", lambda: L.CosineAnnealingWarmRestarts(_sgd(), 2, T_mult=0),
        ValueError, "CosineAnnealingWarmRestarts", ["T_mult >= 1, but got 0"]),
    Bad("warm-restarts-eta-min-str", lambda: L.CosineAnnealingWarmRestarts(_sgd(), 2,
                                                                           eta_min="x"),
        TypeError, "CosineAnnealingWarmRestarts", ["str"]),
    Bad("multistep-gamma-str", lambda: L.MultiStepLR(_sgd(), [2], gamma="x"), TypeError,
        "MultiStepLR", ["str"]),
    Bad("exponential-gamma-str", lambda: L.ExponentialLR(_sgd(), "x"), TypeError,
        "ExponentialLR", ["str"]),
    Bad("steplr-step-size-float", lambda: L.StepLR(_sgd(), 1.5), TypeError, "StepLR",
        ["float"]),
    Bad("cosine-t-max-negative", lambda: L.CosineAnnealingLR(_sgd(), -2), ValueError,
        "CosineAnnealingLR", ["-2"]),
    Bad("linearlr-start-factor-0", lambda: L.LinearLR(_sgd(), start_factor=0), ValueError,
        "LinearLR", ["0"]),
    Bad("linearlr-total-iters-0", lambda: L.LinearLR(_sgd(), total_iters=0), ValueError,
        "LinearLR", ["total_iters", "0"]),
    Bad("scheduler-last-epoch", lambda: L.StepLR(_sgd(), 1, last_epoch=5), ValueError,
        "LRScheduler", ["last_epoch=5"]),
    Bad("lambda-count", lambda: L.LambdaLR(_sgd(), [lambda e: 1.0, lambda e: 1.0]), ValueError,
        "LambdaLR", ["1 lr_lambdas, but got 2"]),
    Bad("lambda-not-callable", lambda: L.LambdaLR(_sgd(), 0.5), TypeError, "LambdaLR",
        ["float"]),
    # silent: pybind11's overload dump for wick._C._optim.LambdaLR, not the value returned.
    Bad("lambda-returns-str", lambda: _lambda_step(lambda e: "x"), TypeError, "LambdaLR",
        ["lr_lambda(0)", "'x'"]),
    Bad("lambda-returns-none", lambda: _lambda_step(lambda e: None), TypeError, "LambdaLR",
        ["None"]),
    # silent: the rate became NaN (PyTorch too).
    Bad("lambda-returns-nan", lambda: _lambda_step(lambda e: math.nan), ValueError, "LambdaLR",
        ["nan"]),
    Bad("lambda-returns-inf-later", lambda: _lambda_step(lambda e: math.inf if e else 1.0),
        ValueError, "LambdaLR", ["lr_lambda(1)", "inf"]),
    Bad("sequential-milestones-count", lambda: _sequential(lambda o: L.StepLR(o, 1), (1, 2)),
        ValueError, "SequentialLR", ["number of schedulers 2"]),
    Bad("sequential-other-optimizer", lambda: _sequential(lambda o: L.StepLR(_sgd(), 1)),
        ValueError, "SequentialLR", ["index 1"]),
    Bad("sequential-not-a-scheduler", lambda: _sequential(lambda o: 3), TypeError,
        "SequentialLR", ["schedulers[1]", "int"]),
]

CASES = OPTIMIZERS + SCHEDULES


@parametrize(CASES)
def test_bad_input(case):
    check(case)
