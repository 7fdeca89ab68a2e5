"""SGD, Adam and AdamW against PyTorch, step by step: the same parameters and gradients must give
the same updates (to 1e-6), with parameter groups, hyperparameter changes through param_groups,
and state_dict round trips. The other optimizers: test_optim_adaptive.py, test_lbfgs.py; the
schedules: test_lr_scheduler.py."""

import numpy as np
import pytest

import wick
from reference import needs_torch, torch

pytestmark = needs_torch


def twins(shapes=((3, 4), (4,)), seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s) for s in shapes]
    w = [wick.nn.Parameter(wick.tensor(v, dtype=wick.float64)) for v in values]
    t = [torch.nn.Parameter(torch.tensor(v, dtype=torch.float64)) for v in values]
    return w, t


def set_grads(w, t, step):
    rng = np.random.default_rng(100 + step)
    for a, b in zip(w, t):
        g = rng.standard_normal(tuple(b.shape))
        a.grad = wick.tensor(g, dtype=wick.float64)
        b.grad = torch.tensor(g, dtype=torch.float64)


def assert_same(w, t, atol=1e-6):
    for a, b in zip(w, t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=atol, rtol=1e-6)


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.3)),
]


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_optimizer_matches_torch(name, kwargs):
    w, t = twins()
    ow = getattr(wick.optim, name)(w, **kwargs)
    ot = getattr(torch.optim, name)(t, **kwargs)
    for step in range(6):
        set_grads(w, t, step)
        ow.step()
        ot.step()
        assert_same(w, t)
    # A hyperparameter changed through the dicts takes effect at the next step.
    ow.param_groups[0]["lr"] = ot.param_groups[0]["lr"] = 0.001
    set_grads(w, t, 99)
    ow.step()
    ot.step()
    assert_same(w, t)


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_optimizer_matches_torch_on_float32_and_strided_parameters(name, kwargs):
    # The fused updates take a vectorised loop where parameter, gradient and state are all
    # contiguous and a strided one otherwise: a float32 pair of each, and float64 views.
    rng = np.random.default_rng(1)
    n = 1000  # more than one vector's width, with a ragged end
    values = [rng.standard_normal(n).astype(np.float32), rng.standard_normal((40, 30))]
    w = [wick.nn.Parameter(wick.tensor(values[0])),
         wick.nn.Parameter(wick.tensor(values[1].T.copy()).t())]  # column-major
    t = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    assert not w[1].is_contiguous()
    ow = getattr(wick.optim, name)(w, **kwargs)
    ot = getattr(torch.optim, name)(t, **kwargs)
    for step in range(4):
        rng = np.random.default_rng(200 + step)
        for a, b in zip(w, t):
            g = rng.standard_normal(tuple(b.shape)).astype(b.detach().numpy().dtype)
            a.grad, b.grad = wick.tensor(g), torch.tensor(g)
        ow.step()
        ot.step()
        for a, b in zip(w, t):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-5,
                                       rtol=1e-5)


def test_param_groups():
    w, t = twins(((2, 3), (3,), (5,)))
    ow = wick.optim.SGD([{"params": w[:2]}, {"params": [w[2]], "lr": 0.5}], lr=0.1, momentum=0.9)
    ot = torch.optim.SGD([{"params": t[:2]}, {"params": [t[2]], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert ow.param_groups[1]["lr"] == 0.5 and ow.param_groups[0]["momentum"] == 0.9
    for step in range(3):
        set_grads(w, t, step)
        ow.step()
        ot.step()
    assert_same(w, t)
    extra_w, extra_t = twins(((2,),), seed=5)
    ow.add_param_group({"params": extra_w, "lr": 0.2})
    ot.add_param_group({"params": extra_t, "lr": 0.2})
    set_grads(w + extra_w, t + extra_t, 10)
    ow.step()
    ot.step()
    assert_same(w + extra_w, t + extra_t)
    with pytest.raises(ValueError):
        wick.optim.SGD([{"params": w[:1]}, {"params": w[:1]}], lr=0.1)


def test_zero_grad_and_closure():
    w, _ = twins()
    opt = wick.optim.Adam(w)
    for p in w:
        p.grad = wick.ones_like(p)
    opt.zero_grad()
    assert all(p.grad is None for p in w)

    def closure():
        opt.zero_grad()
        loss = (w[0] ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() > 0


def test_state_dict_round_trip(tmp_path):
    w, t = twins()
    ow = wick.optim.Adam(w, lr=0.01)
    ot = torch.optim.Adam(t, lr=0.01)
    for step in range(3):
        set_grads(w, t, step)
        ow.step()
        ot.step()
    sd = ow.state_dict()
    tsd = ot.state_dict()
    assert sorted(sd["state"][0]) == sorted(tsd["state"][0])
    assert sd["param_groups"][0]["params"] == tsd["param_groups"][0]["params"]
    np.testing.assert_allclose(sd["state"][1]["exp_avg"].numpy(), tsd["state"][1]["exp_avg"])
    path = tmp_path / "opt.safetensors"
    wick.save(sd, path)
    w2 = [wick.nn.Parameter(p.detach().clone()) for p in w]
    ow2 = wick.optim.Adam(w2, lr=0.5)
    ow2.load_state_dict(wick.load(path))
    assert ow2.param_groups[0]["lr"] == 0.01
    set_grads(w, t, 7)
    set_grads(w2, t, 7)
    ow.step()
    ow2.step()
    for a, b in zip(w, w2):  # the restored optimizer continues exactly like the original
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    with pytest.raises(ValueError):
        wick.optim.Adam(w[:1]).load_state_dict(sd)


def test_invalid_arguments():
    w, _ = twins()
    with pytest.raises(ValueError):
        wick.optim.Adam(w, lr=-1)
    with pytest.raises(ValueError):
        wick.optim.Adam(w, betas=(1.5, 0.9))
    with pytest.raises(ValueError):
        wick.optim.Adam(w, amsgrad=True)
    with pytest.raises(ValueError):
        wick.optim.SGD(w, lr=0.1, nesterov=True)
    with pytest.raises(ValueError):
        wick.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError):
        wick.optim.SGD(wick.zeros(2), lr=0.1)
    with pytest.raises(ValueError):
        wick.optim.SGD([{"params": w}])  # lr required
