"""The learning-rate schedules against PyTorch 1.13: the rate (and cycled momentum) of every group
over the epochs, with the optimizer stepping alongside, state_dict round trips mid-run, and
PyTorch's errors for bad arguments."""

import math

import numpy as np
import pytest

import wick
from reference import needs_torch, torch
from test_optim import assert_same, set_grads, twins

pytestmark = needs_torch

# One group, with the optimizer stepping alongside: the updates must match too.
ONE_GROUP_SCHEDULES = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5], gamma=0.1)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("LinearLR", dict(start_factor=0.25, total_iters=4)),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=12)),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=12, anneal_strategy="linear", three_phase=True)),
]


@pytest.mark.parametrize("name,kwargs", ONE_GROUP_SCHEDULES)
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_one_group_schedule_matches_torch(name, kwargs, opt):
    w, t = twins()
    extra = dict(momentum=0.9) if opt == "SGD" else {}
    ow = getattr(wick.optim, opt)(w, lr=0.05, **extra)
    ot = getattr(torch.optim, opt)(t, lr=0.05, **extra)
    sw = getattr(wick.optim.lr_scheduler, name)(ow, **kwargs)
    st = getattr(torch.optim.lr_scheduler, name)(ot, **kwargs)
    for step in range(11):
        assert ow.param_groups[0]["lr"] == pytest.approx(ot.param_groups[0]["lr"], abs=1e-12)
        assert sw.get_last_lr() == pytest.approx(st.get_last_lr(), abs=1e-12)
        if opt == "SGD":
            assert ow.param_groups[0]["momentum"] == pytest.approx(ot.param_groups[0]["momentum"])
        else:
            assert ow.param_groups[0]["betas"][0] == pytest.approx(ot.param_groups[0]["betas"][0])
        set_grads(w, t, step)
        ow.step()
        ot.step()
        sw.step()
        st.step()
        assert_same(w, t)
    assert sw.last_epoch == st.last_epoch
    state = sw.state_dict()
    assert state["last_epoch"] == st.state_dict()["last_epoch"]


def test_scheduler_state_dict():
    w, _ = twins()
    opt = wick.optim.SGD(w, lr=1.0)
    s = wick.optim.lr_scheduler.StepLR(opt, 2, 0.5)
    for _ in range(5):
        opt.step()
        s.step()
    saved = s.state_dict()
    opt2 = wick.optim.SGD(w, lr=1.0)
    s2 = wick.optim.lr_scheduler.StepLR(opt2, 2, 0.5)
    s2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"] == 0.25


def pair(opt, groups=False, **kwargs):
    w, t = twins(((3, 4), (4,)))
    if groups:
        w = [{"params": w[:1]}, {"params": w[1:], "lr": 0.2}]
        t = [{"params": t[:1]}, {"params": t[1:], "lr": 0.2}]
    return getattr(wick.optim, opt)(w, lr=0.05, **kwargs), \
        getattr(torch.optim, opt)(t, lr=0.05, **kwargs)


def lr_lambda(epoch):
    return 0.9 ** epoch if epoch > 3 else (epoch + 1) / 4


class Warmup:
    """A callable object: LambdaLR's state_dict saves its attributes."""

    def __init__(self, steps):
        self.steps = steps

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.steps)


SCHEDULES = [
    ("ExponentialLR", lambda m: dict(gamma=0.9)),
    ("LambdaLR", lambda m: dict(lr_lambda=lr_lambda)),
    ("LambdaLR", lambda m: dict(lr_lambda=[Warmup(5), lambda e: 1 / (1 + e)])),
    ("CosineAnnealingWarmRestarts", lambda m: dict(T_0=5)),
    ("CosineAnnealingWarmRestarts", lambda m: dict(T_0=3, T_mult=2, eta_min=0.001)),
    ("CyclicLR", lambda m: dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", lambda m: dict(base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                                step_size_down=5, mode="triangular2")),
    ("CyclicLR", lambda m: dict(base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range",
                                gamma=0.95, base_momentum=0.7, max_momentum=0.95)),
    ("CyclicLR", lambda m: dict(base_lr=0.01, max_lr=0.1, step_size_up=2,
                                scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations",
                                cycle_momentum=False)),
    ("SequentialLR", lambda m: dict(
        schedulers=[m.lr_scheduler.LinearLR(m.opt, start_factor=0.1, total_iters=4),
                    m.lr_scheduler.ExponentialLR(m.opt, gamma=0.9),
                    m.lr_scheduler.CosineAnnealingLR(m.opt, T_max=6)],
        milestones=[5, 12])),
    ("SequentialLR", lambda m: dict(
        schedulers=[m.lr_scheduler.LinearLR(m.opt, start_factor=0.5, end_factor=0.5,
                                            total_iters=3),
                    m.lr_scheduler.StepLR(m.opt, step_size=4, gamma=0.5)],
        milestones=[3])),
]


class _Lib:
    """The module namespace a schedule's arguments are made from, with the optimizer at hand
    (SequentialLR's inner schedules need it)."""

    def __init__(self, module, opt):
        self.lr_scheduler, self.opt = module.lr_scheduler, opt


@pytest.mark.parametrize("name,make", SCHEDULES)
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_schedule_matches_torch(name, make, opt):
    extra = dict(momentum=0.9) if opt == "SGD" else {}
    ow, ot = pair(opt, groups=True, **extra)
    kw, kt = make(_Lib(wick.optim, ow)), make(_Lib(torch.optim, ot))
    if opt == "Adam" and name == "CyclicLR" and kt.get("cycle_momentum", True):
        # PyTorch 1.13 cycles only "momentum"; wick also cycles Adam's beta1 (as PyTorch 2)
        with pytest.raises(ValueError, match="optimizer must support momentum"):
            getattr(torch.optim.lr_scheduler, name)(ot, **kt)
        sw = getattr(wick.optim.lr_scheduler, name)(ow, **kw)
        assert ow.param_groups[0]["betas"][0] == pytest.approx(kw.get("max_momentum", 0.9))
        return
    sw = getattr(wick.optim.lr_scheduler, name)(ow, **kw)
    st = getattr(torch.optim.lr_scheduler, name)(ot, **kt)
    w = [p for g in ow.param_groups for p in g["params"]]
    t = [p for g in ot.param_groups for p in g["params"]]
    for epoch in range(30):
        for gw, gt in zip(ow.param_groups, ot.param_groups):
            assert gw["lr"] == pytest.approx(gt["lr"], rel=1e-12, abs=1e-15), epoch
            if opt == "SGD":
                assert gw["momentum"] == pytest.approx(gt["momentum"], rel=1e-12), epoch
        assert sw.get_last_lr() == pytest.approx(st.get_last_lr(), rel=1e-12, abs=1e-15)
        set_grads(w, t, epoch)
        ow.step()
        ot.step()
        sw.step()
        st.step()
    assert_same(w, t)
    assert sw.last_epoch == st.last_epoch


@pytest.mark.parametrize("name,make", [SCHEDULES[i] for i in (2, 4, 7, 9)])
def test_state_dict_mid_run(name, make):
    ow, ot = pair("SGD", groups=True, momentum=0.9)
    sw = getattr(wick.optim.lr_scheduler, name)(ow, **make(_Lib(wick.optim, ow)))
    st = getattr(torch.optim.lr_scheduler, name)(ot, **make(_Lib(torch.optim, ot)))
    for _ in range(7):
        sw.step()
        st.step()
    saved = sw.state_dict()
    assert saved["last_epoch"] == st.state_dict()["last_epoch"] == 7
    ow2, _ = pair("SGD", groups=True, momentum=0.9)
    sw2 = getattr(wick.optim.lr_scheduler, name)(ow2, **make(_Lib(wick.optim, ow2)))
    sw2.load_state_dict(saved)
    for _ in range(10):  # the restored schedule continues like the original and torch's
        assert ow2.param_groups[0]["lr"] == pytest.approx(ot.param_groups[0]["lr"], rel=1e-12)
        assert ow2.param_groups[0]["momentum"] == pytest.approx(ot.param_groups[0]["momentum"])
        sw2.step()
        st.step()


def test_lambda_lr_saves_callable_objects():
    ow, _ = pair("SGD", groups=True)
    fn = Warmup(5)
    s = wick.optim.lr_scheduler.LambdaLR(ow, fn)
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"steps": 5}, {"steps": 5}]
    fn.steps = 2
    s.load_state_dict(sd)
    assert fn.steps == 5
    assert wick.optim.lr_scheduler.LambdaLR(ow, lr_lambda).state_dict()["lr_lambdas"] == \
        [None, None]


LOSSES = [1.0, 0.9, 0.95, 0.92, 0.91, 0.905, 0.93, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6,
          0.49999, 0.6, 0.7, 0.8, 0.9, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]


@pytest.mark.parametrize("kwargs", [
    dict(patience=2),
    dict(mode="max", factor=0.5, patience=1, threshold=0.01, cooldown=2),
    dict(patience=0, threshold_mode="abs", threshold=0.02, min_lr=[0.01, 0.001]),
    dict(patience=1, factor=0.5, min_lr=0.04, eps=1e-3),
])
def test_reduce_lr_on_plateau(kwargs):
    ow, ot = pair("SGD", groups=True, momentum=0.9)
    sw = wick.optim.lr_scheduler.ReduceLROnPlateau(ow, **kwargs)
    st = torch.optim.lr_scheduler.ReduceLROnPlateau(ot, **kwargs)
    drops = 0
    for epoch, loss in enumerate(LOSSES):
        before = ow.param_groups[0]["lr"]
        sw.step(wick.tensor(loss, dtype=wick.float64) if epoch % 2 else loss)
        st.step(loss)
        drops += ow.param_groups[0]["lr"] != before
        for gw, gt in zip(ow.param_groups, ot.param_groups):
            assert gw["lr"] == pytest.approx(gt["lr"], rel=1e-12), epoch
        assert sw.best == st.best and sw.num_bad_epochs == st.num_bad_epochs
        assert sw.cooldown_counter == st.cooldown_counter and sw.last_epoch == st.last_epoch
        if epoch == 12:  # a round trip mid-run continues identically
            sd = sw.state_dict()
            ow2, _ = pair("SGD", groups=True, momentum=0.9)
            ow2.load_state_dict(ow.state_dict())
            sw = wick.optim.lr_scheduler.ReduceLROnPlateau(ow2, mode="max")
            sw.load_state_dict(sd)
            ow = ow2
    assert sw.get_last_lr() == st._last_lr
    assert drops >= 1  # the sequence does make the rate drop


def test_bad_arguments():
    ow, ot = pair("SGD")
    ls = wick.optim.lr_scheduler
    cases = [
        (lambda m, o: m.ReduceLROnPlateau(o, factor=1.0), "Factor should be < 1.0."),
        (lambda m, o: m.ReduceLROnPlateau(o, mode="up"), "mode up is unknown!"),
        (lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="x"), "threshold mode x is unknown!"),
        (lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0, 0]), "expected 1 min_lrs, got 2"),
        (lambda m, o: m.LambdaLR(o, [lr_lambda, lr_lambda]), "Expected 1 lr_lambdas, but got 2"),
        (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0), "Expected positive integer T_0"),
        (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.5), "Expected positive integer T_0"),
        (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
         "Expected integer T_mult >= 1, but got 0"),
        (lambda m, o: m.CyclicLR(o, 0.01, 0.1, mode="sine"),
         "mode is invalid and scale_fn is None"),
        (lambda m, o: m.CyclicLR(o, [0.01, 0.02], 0.1), "expected 1 values for base_lr, got 2"),
        (lambda m, o: m.SequentialLR(o, [m.ExponentialLR(o, 0.9)], milestones=[3]),
         "expects number of schedulers provided to be one more than the number of milestone"),
    ]
    for make, message in cases:
        with pytest.raises(ValueError, match=message):
            make(torch.optim.lr_scheduler, ot)
        with pytest.raises(ValueError, match=message):
            make(ls, ow)
    other, other_t = pair("SGD")
    with pytest.raises(ValueError, match="to be different than the optimizer passed in"):
        ls.SequentialLR(ow, [ls.ExponentialLR(other, 0.9)], milestones=[])
    adagrad = wick.optim.Adagrad(twins()[0])
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        ls.CyclicLR(adagrad, 0.01, 0.1)


def test_schedules_on_the_new_optimizers():
    # RMSprop's momentum is cycled like SGD's; Adadelta keeps its lr schedule.
    w, t = twins()
    ow, ot = wick.optim.RMSprop(w, lr=0.01, momentum=0.9), torch.optim.RMSprop(t, lr=0.01,
                                                                              momentum=0.9)
    sw = wick.optim.lr_scheduler.CyclicLR(ow, 0.001, 0.01, step_size_up=3)
    st = torch.optim.lr_scheduler.CyclicLR(ot, 0.001, 0.01, step_size_up=3)
    for epoch in range(10):
        set_grads(w, t, epoch)
        ow.step()
        ot.step()
        sw.step()
        st.step()
        assert ow.param_groups[0]["momentum"] == pytest.approx(ot.param_groups[0]["momentum"])
    assert_same(w, t)
    assert math.isclose(ow.param_groups[0]["lr"], ot.param_groups[0]["lr"], rel_tol=1e-12)
    np.testing.assert_allclose(sw.get_last_lr(), st.get_last_lr(), rtol=1e-12)
