"""Optimizer, state-dict and checkpoint reliability: a failed load changes nothing,
a resized parameter or a mistyped gradient never reaches the update kernels, clip_grad_norm_
treats every gradient alike when the norm is not finite, seeds follow torch.Generator's rules,
and train_mnist.py refuses an empty dataset. The error messages themselves are checked by the
corpus (bad_inputs/test_state.py); these tests check what stays unchanged."""

import copy
import gzip
import math
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import wick
from wick import nn, optim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def values(t):
    return np.array(t.tolist())


def stepped_adam():
    a, b = nn.Parameter(wick.ones(2)), nn.Parameter(wick.ones(3))
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.01}])
    a.grad, b.grad = wick.ones(2), wick.ones(3)
    opt.step()
    return (a, b), opt


def snapshot(opt):
    sd = opt.state_dict()
    state = {i: {k: values(v) for k, v in s.items()} for i, s in sd["state"].items()}
    return state, copy.deepcopy(sd["param_groups"]), copy.deepcopy(opt.param_groups[0]["lr"])


def same(x, y):
    (sx, gx, lx), (sy, gy, ly) = x, y
    assert gx == gy and lx == ly
    assert sx.keys() == sy.keys()
    for i in sx:
        assert sx[i].keys() == sy[i].keys()
        for k in sx[i]:
            np.testing.assert_array_equal(sx[i][k], sy[i][k])


@pytest.mark.parametrize("edit", [
    lambda sd: sd["state"][1].pop("exp_avg_sq"),
    lambda sd: sd["param_groups"][0].update(lr=math.nan),
    lambda sd: sd["param_groups"][1].update(betas=(0.9, -1.0)),
    lambda sd: sd["state"][0].update(step=wick.tensor(-5.0)),
    lambda sd: sd["state"][0].update(exp_avg=wick.zeros(5)),
    lambda sd: sd["param_groups"][1].update(eps=-1.0),
], ids=["missing-exp_avg_sq", "lr-nan", "beta2-negative", "step-negative", "shape", "eps"])
def test_failed_optimizer_load_changes_nothing(edit):
    params, opt = stepped_adam()
    good = opt.state_dict()
    for g in opt.param_groups:  # a change the bad load must not undo or overwrite
        g["lr"] = 0.5
    before = snapshot(opt)
    bad = copy.deepcopy({"state": {i: dict(s) for i, s in good["state"].items()},
                         "param_groups": good["param_groups"]})
    edit(bad)
    with pytest.raises((ValueError, TypeError)):
        opt.load_state_dict(bad)
    same(snapshot(opt), before)
    # The good state dict still loads, and training goes on.
    opt.load_state_dict(good)
    assert opt.param_groups[0]["lr"] == good["param_groups"][0]["lr"]
    params[0].grad, params[1].grad = wick.ones(2), wick.ones(3)
    opt.step()


@pytest.mark.parametrize("kind", ["sgd", "adam", "adamw"])
@pytest.mark.parametrize("new_size", [5, 2])
def test_resized_parameter_is_refused_and_left_alone(kind, new_size):
    p = nn.Parameter(wick.ones(3))
    opt = {"sgd": lambda: optim.SGD([p], lr=0.1, momentum=0.9),
           "adam": lambda: optim.Adam([p]), "adamw": lambda: optim.AdamW([p])}[kind]()
    p.grad = wick.ones(3)
    opt.step()
    p.data = wick.full((new_size,), 2.0)
    p.grad = wick.ones(new_size)
    with pytest.raises(RuntimeError, match="parameter 0 has shape"):
        opt.step()
    np.testing.assert_array_equal(values(p), np.full(new_size, 2.0))


def test_a_mistyped_gradient_is_refused_not_skipped():
    p = nn.Parameter(wick.ones(3))
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(RuntimeError, match="different type"):
        p.grad = wick.ones(3, dtype=wick.float64)
    assert p.grad is None
    p.grad = wick.ones(3)
    opt.step()
    np.testing.assert_allclose(values(p), np.full(3, 0.9), rtol=1e-6)


def test_failed_add_param_group_changes_nothing():
    opt = optim.SGD([nn.Parameter(wick.ones(2))], lr=0.1)
    with pytest.raises(ValueError):
        opt.add_param_group({"params": [nn.Parameter(wick.ones(1))], "momentum": -1.0})
    assert len(opt.param_groups) == 1
    opt.add_param_group({"params": [nn.Parameter(wick.ones(1))], "lr": 0.2})
    assert len(opt.param_groups) == 2


def test_failed_scheduler_load_changes_nothing():
    p = nn.Parameter(wick.ones(2))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    sched = optim.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=10)
    for _ in range(3):
        opt.step()
        sched.step()
    before = (sched.last_epoch, sched.get_last_lr(), dict(opt.param_groups[0], params=None))
    with pytest.raises(ValueError, match="total_steps"):
        sched.load_state_dict(dict(sched.state_dict(), last_epoch=100))  # past the end
    assert (sched.last_epoch, sched.get_last_lr(),
            dict(opt.param_groups[0], params=None)) == before


def clip(first):
    p = [nn.Parameter(wick.ones(2)), nn.Parameter(wick.ones(2))]
    p[0].grad = wick.tensor(first)
    p[1].grad = wick.ones(2)
    norm = nn.utils.clip_grad_norm_(p, 1.0)
    return norm.item(), values(p[0].grad), values(p[1].grad)


def test_clip_grad_norm_scales_every_gradient_by_a_nan_norm():
    # PyTorch 1.13: tensor(nan), and every gradient becomes NaN - none is left unscaled.
    norm, g0, g1 = clip([math.nan, 1.0])
    assert math.isnan(norm) and np.isnan(g0).all() and np.isnan(g1).all()
    # An infinite norm scales by 0: inf * 0 is NaN, the finite values become 0.
    norm, g0, g1 = clip([math.inf, 1.0])
    assert norm == math.inf
    assert math.isnan(g0[0]) and g0[1] == 0 and (g1 == 0).all()


def test_seeds_follow_torch_generator():
    wick.manual_seed(-1)  # negatives wrap, as in torch.Generator.manual_seed
    assert wick.initial_seed() == 2**64 - 1
    wick.manual_seed(2**64 - 1)
    a = values(wick.rand(4))
    wick.manual_seed(np.int64(-1))  # NumPy integers count as integers
    np.testing.assert_array_equal(values(wick.rand(4)), a)
    for bad in (1.5, 1.7, 2.0):
        with pytest.raises(RuntimeError, match="expected an integer seed"):
            wick.manual_seed(bad)
    wick.manual_seed(3)
    state = wick.get_rng_state()
    wick.set_rng_state(state)
    assert wick.get_rng_state() == state


def test_save_and_load_still_round_trip(tmp_path):
    _, opt = stepped_adam()
    path = tmp_path / "opt.pt"
    wick.save({"optimizer": opt.state_dict(), "epoch": 3}, path)
    loaded = wick.load(path)
    assert loaded["epoch"] == 3
    opt.load_state_dict(loaded["optimizer"])
    with open(path, "rb") as f:  # a file object, too
        assert wick.load(f)["epoch"] == 3


def empty_mnist(folder):
    for split in ("train", "t10k"):
        with gzip.open(folder / f"{split}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 0x803, 0, 28, 28))
        with gzip.open(folder / f"{split}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 0x801, 0))


def test_train_mnist_py_refuses_an_empty_dataset(tmp_path):
    empty_mnist(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_mnist.py"),
                          "--data", str(tmp_path), "--epochs", "1", "--model", "mlp",
                          "--workers", "0"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "has 0 examples, which make no batch" in lines[0], run.stderr
    assert "nan" not in run.stdout


@pytest.mark.parametrize("case", ["missing", "not-a-checkpoint", "directory"])
def test_train_mnist_py_refuses_a_bad_checkpoint(tmp_path, case):
    path = {"missing": tmp_path / "nope.pt", "directory": tmp_path,
            "not-a-checkpoint": tmp_path / "other.pt"}[case]
    if case == "not-a-checkpoint":
        wick.save({"weights": wick.ones(2)}, path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_mnist.py"),
                          "--resume", str(path), "--epochs", "1", "--model", "mlp"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("[train_mnist] cannot resume from"), run.stderr
