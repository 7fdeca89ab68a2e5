"""RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam against PyTorch 1.13, step by step on the
same parameters and gradients (the pattern of test_optim.py): plain and with every option, with
parameter groups, a hyperparameter changed through param_groups, state_dict round trips mid-run,
and PyTorch's errors for bad arguments."""

import numpy as np
import pytest

import wick
from reference import needs_torch, torch
from test_optim import assert_same, set_grads, twins

pytestmark = needs_torch

CONFIGS = [
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.05)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3,
                     eps=1e-8)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01)),
    ("RAdam", dict()),
    # beta2 = 0.9 makes rho_t pass 5 after a few steps, so both branches of the update run
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
]


def run_both(ow, ot, w, t, steps, first=0):
    for step in range(first, first + steps):
        set_grads(w, t, step)
        ow.step()
        ot.step()
        assert_same(w, t)


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_optimizer_matches_torch(name, kwargs):
    w, t = twins()
    ow = getattr(wick.optim, name)(w, **kwargs)
    ot = getattr(torch.optim, name)(t, **kwargs)
    assert ow.param_groups[0].keys() == ot.param_groups[0].keys()
    for key, value in ot.param_groups[0].items():
        if key != "params":
            assert ow.param_groups[0][key] == value, key
    run_both(ow, ot, w, t, 12)
    # A hyperparameter changed through the dicts takes effect at the next step.
    ow.param_groups[0]["lr"] = ot.param_groups[0]["lr"] = 0.003
    ow.param_groups[0]["weight_decay"] = ot.param_groups[0]["weight_decay"] = 0.2
    run_both(ow, ot, w, t, 2, first=50)


@pytest.mark.parametrize("name,kwargs", CONFIGS[::2])
def test_float32_matches_torch(name, kwargs):
    rng = np.random.default_rng(3)
    v = rng.standard_normal((5, 3)).astype(np.float32)
    w = wick.nn.Parameter(wick.tensor(v))
    t = torch.nn.Parameter(torch.tensor(v))
    ow = getattr(wick.optim, name)([w], **kwargs)
    ot = getattr(torch.optim, name)([t], **kwargs)
    for step in range(5):
        g = rng.standard_normal((5, 3)).astype(np.float32)
        w.grad, t.grad = wick.tensor(g), torch.tensor(g)
        ow.step()
        ot.step()
    assert w.dtype == wick.float32
    np.testing.assert_allclose(w.detach().numpy(), t.detach().numpy(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name,kwargs", CONFIGS[1::2])
def test_param_groups(name, kwargs):
    w, t = twins(((2, 3), (3,), (5,)))
    groups_w = [{"params": w[:2]}, {"params": [w[2]], "lr": 0.05, "weight_decay": 0.3}]
    groups_t = [{"params": t[:2]}, {"params": [t[2]], "lr": 0.05, "weight_decay": 0.3}]
    ow = getattr(wick.optim, name)(groups_w, **kwargs)
    ot = getattr(torch.optim, name)(groups_t, **kwargs)
    assert ow.param_groups[1]["lr"] == 0.05
    run_both(ow, ot, w, t, 4)
    extra_w, extra_t = twins(((2,),), seed=5)
    ow.add_param_group({"params": extra_w, "lr": 0.02})
    ot.add_param_group({"params": extra_t, "lr": 0.02})
    if name == "Adagrad":  # PyTorch fills Adagrad's state at construction only
        ot.state[extra_t[0]] = {"step": torch.tensor(0.0),
                                "sum": torch.full_like(extra_t[0], ot.defaults[
                                    "initial_accumulator_value"])}
    run_both(ow, ot, w + extra_w, t + extra_t, 3, first=20)


@pytest.mark.parametrize("name,kwargs", CONFIGS[1::2])
def test_state_dict_round_trip(name, kwargs, tmp_path):
    w, t = twins()
    ow = getattr(wick.optim, name)(w, **kwargs)
    ot = getattr(torch.optim, name)(t, **kwargs)
    run_both(ow, ot, w, t, 4)
    sd, tsd = ow.state_dict(), ot.state_dict()
    assert sorted(sd["state"][0]) == sorted(tsd["state"][0])
    for key, value in tsd["state"][1].items():
        np.testing.assert_allclose(np.asarray(sd["state"][1][key].numpy(), dtype=np.float64),
                                   np.asarray(value, dtype=np.float64), rtol=1e-6, atol=1e-9)
    path = tmp_path / "opt.safetensors"
    wick.save(sd, path)
    w2 = [wick.nn.Parameter(p.detach().clone()) for p in w]
    ow2 = getattr(wick.optim, name)(w2, lr=0.5)
    ow2.load_state_dict(wick.load(path))
    assert ow2.param_groups[0]["lr"] == ow.param_groups[0]["lr"]
    for step in range(3):  # the restored optimizer continues exactly like the original and torch
        set_grads(w, t, 30 + step)
        set_grads(w2, t, 30 + step)
        ow.step()
        ow2.step()
        ot.step()
        assert_same(w2, t)
        for a, b in zip(w, w2):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)


def test_rmsprop_momentum_switched_on_later():
    # PyTorch creates momentum_buffer only for momentum > 0 at the first step; wick starts it at
    # zero when a group is switched to momentum later instead of failing.
    w, _ = twins(((3,),))
    opt = wick.optim.RMSprop(w, lr=0.01)
    w[0].grad = wick.ones(3, dtype=wick.float64)
    opt.step()
    assert sorted(opt.state_dict()["state"][0]) == ["square_avg", "step"]
    opt.param_groups[0]["momentum"] = 0.9
    opt.param_groups[0]["centered"] = True
    opt.step()
    assert sorted(opt.state_dict()["state"][0]) == ["grad_avg", "momentum_buffer", "square_avg",
                                                   "step"]


BAD = [
    ("RMSprop", dict(lr=-1), "Invalid learning rate: -1"),
    ("RMSprop", dict(eps=-1e-3), "Invalid epsilon value: -0.001"),
    ("RMSprop", dict(momentum=-0.5), "Invalid momentum value: -0.5"),
    ("RMSprop", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("RMSprop", dict(alpha=-0.1), "Invalid alpha value: -0.1"),
    ("Adagrad", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("Adagrad", dict(lr_decay=-1), "Invalid lr_decay value: -1"),
    ("Adagrad", dict(initial_accumulator_value=-2),
     "Invalid initial_accumulator_value value: -2"),
    ("Adagrad", dict(eps=-1), "Invalid epsilon value: -1"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(rho=-0.1), "Invalid rho value: -0.1"),
    ("Adadelta", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("Adamax", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("NAdam", dict(eps=-1), "Invalid epsilon value: -1"),
    ("RAdam", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("RAdam", dict(lr=float("nan")), "Invalid learning rate: nan"),
]


@pytest.mark.parametrize("name,kwargs,message", BAD)
def test_bad_arguments(name, kwargs, message):
    w, t = twins()
    if not (name == "RAdam" and "lr" in kwargs):  # PyTorch 1.13 lets NaN through
        with pytest.raises(ValueError, match=message):
            getattr(torch.optim, name)(t, **kwargs)
    with pytest.raises(ValueError, match=message):
        getattr(wick.optim, name)(w, **kwargs)


def test_unsupported_options_are_refused():
    w, _ = twins()
    for name, kwargs in [("RMSprop", dict(maximize=True)), ("RMSprop", dict(differentiable=True)),
                         ("Adagrad", dict(maximize=True)), ("Adadelta", dict(maximize=True)),
                         ("Adamax", dict(maximize=True))]:
        with pytest.raises(ValueError, match=f"{list(kwargs)[0]}=True is not supported"):
            getattr(wick.optim, name)(w, **kwargs)
    opt = wick.optim.Adadelta(w, foreach=False)  # an implementation choice: accepted
    opt.param_groups[0]["maximize"] = True
    w[0].grad = wick.ones_like(w[0])
    with pytest.raises(ValueError, match="maximize=True is not supported"):
        opt.step()


def test_bad_group_options_are_refused_by_cpp():
    w, _ = twins()
    with pytest.raises(ValueError, match=r"\[Adadelta\] group 1: rho must be in \[0, 1\]; got 2"):
        wick.optim.Adadelta([{"params": w[:1]}, {"params": w[1:], "rho": 2.0}])
    with pytest.raises(ValueError, match="betas must be in"):
        wick.optim.NAdam([{"params": w[:1]}, {"params": w[1:], "betas": (0.9, 1.0)}])


def test_mnist_example_adadelta_with_steplr():
    # pytorch/examples mnist/main.py: Adadelta(model.parameters(), lr=args.lr) with
    # StepLR(optimizer, step_size=1, gamma=args.gamma), stepped once per epoch.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = rng.integers(0, 3, 64)
    wick.manual_seed(0)
    model_w = wick.nn.Linear(8, 3)
    model_t = torch.nn.Linear(8, 3)
    with torch.no_grad():
        model_t.weight.copy_(torch.tensor(model_w.weight.detach().numpy()))
        model_t.bias.copy_(torch.tensor(model_w.bias.detach().numpy()))
    runs = []
    for lib, model in [(wick, model_w), (torch, model_t)]:
        first = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y)).item()
        optimizer = lib.optim.Adadelta(model.parameters(), lr=1.0)
        scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
        losses = []
        for _epoch in range(3):
            for batch in range(4):
                optimizer.zero_grad()
                xb = lib.tensor(x[batch * 16:(batch + 1) * 16])
                yb = lib.tensor(y[batch * 16:(batch + 1) * 16])
                loss = lib.nn.functional.cross_entropy(model(xb), yb)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            scheduler.step()
        last = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y)).item()
        assert last < first
        runs.append((losses, optimizer.param_groups[0]["lr"]))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-4)
    assert runs[0][1] == pytest.approx(runs[1][1]) == pytest.approx(0.7 ** 3)
