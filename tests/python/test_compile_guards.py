"""wick.compile never replays a stale graph: every guard (inputs, grad mode, autocast, training
flags, parameter identity) retraces when it fails and says which one failed; a traced call that
reads a tensor's value into Python breaks the graph (runs eagerly) or, with fullgraph=True,
raises; zero-size values replay as eager computes them, with and without the memory plan."""

import warnings

import numpy as np
import pytest

import wick
from wick import nn
import wick.nn.functional as F


def close(a, b, tol=1e-6):
    a, b = np.asarray(a.tolist(), dtype=np.float64), np.asarray(b.tolist(), dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---- zero-size values -------------------------------------------------------------------------

ZERO_SIZE = {
    "add_sum": lambda x: (x + 1).sum(),
    "add_mean": lambda x: (x * 2 + 1).mean(dim=0),
    "chain_relu": lambda x: F.relu(x * 3 - 1).exp() + x,
    "matmul": lambda x: (x @ wick.ones(x.shape[-1], 5)).sum(dim=-1),
    "softmax": lambda x: F.softmax(x + 1, dim=-1) * 2,
    "amax_keep": lambda x: (x - 1).amax(dim=-1, keepdim=True),
    "cat": lambda x: wick.cat([x + 1, x * 2], dim=0).sum(dim=0),
}


@pytest.mark.parametrize("plan", [True, False], ids=["planned", "unplanned"])
@pytest.mark.parametrize("name", sorted(ZERO_SIZE))
@pytest.mark.parametrize("shape", [(0,), (0, 4), (3, 0)], ids=str)
def test_zero_size_values_replay_as_eager(name, shape, plan):
    fn = ZERO_SIZE[name]
    x = wick.ones(*shape)
    if name in ("matmul", "softmax", "amax_keep") and len(shape) == 1:
        pytest.skip("a 1-d input has no rows here")
    if name == "amax_keep" and shape[-1] == 0:
        with pytest.raises(IndexError):  # as PyTorch: amax over an empty dimension
            fn(x)
        return
    compiled = wick.compile(fn, plan_memory=plan)
    want = fn(x)
    for _ in range(3):  # the tracing call, then replays
        close(compiled(x), want)


def test_zero_batch_after_a_normal_call_retraces_and_replays():
    fn = lambda x: (x + 1).sum(dim=-1)
    compiled = wick.compile(fn)
    close(compiled(wick.ones(4, 3)), fn(wick.ones(4, 3)))
    close(compiled(wick.ones(0, 3)), fn(wick.ones(0, 3)))
    close(compiled(wick.ones(0, 3)), fn(wick.ones(0, 3)))
    assert compiled.retraces == 1


def test_a_model_on_a_batch_of_zero():
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    model.eval()
    compiled = wick.compile(model, freeze=True)
    for n in (2, 0, 0):
        x = wick.randn(n, 1, 8, 8)
        close(compiled(x), model(x), tol=1e-5)


@pytest.mark.parametrize("compile", [True, False], ids=["compiled", "eager"])
def test_an_imported_onnx_model_on_a_batch_of_zero(compile):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    import wick.onnx
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    nodes = [helper.make_node("Add", ["x", "one"], ["a"]),
             helper.make_node("ReduceMean", ["a"], ["y"], axes=[1], keepdims=0)]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [one]),
                              opset_imports=[helper.make_opsetid("", 13)])
    run = wick.onnx.load(model, compile=compile)
    close(run(wick.ones(2, 3)), wick.full((2,), 2.0))
    for _ in range(2):
        assert tuple(run(wick.ones(0, 3)).shape) == (0,)


# ---- guards -----------------------------------------------------------------------------------

def test_eval_after_compiling_in_training_mode_retraces_without_dropout():
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
    compiled = wick.compile(model)
    x = wick.ones(4, 8)
    with wick.no_grad():
        compiled(x)
        model.eval()
        got = compiled(x)
    close(got, model(x).detach())
    assert compiled.retraces == 1
    assert "training of module '(root)'=off (was training of module '(root)'=on)" in compiled.log
    model.train()
    with wick.no_grad():
        compiled(x)
    assert compiled.retraces == 1  # training mode's graph is still cached


def test_a_replaced_parameter_is_seen():
    model = nn.Linear(2, 1)
    compiled = wick.compile(model)
    x = wick.ones(1, 2)
    with wick.no_grad():
        compiled(x)
        model.weight = nn.Parameter(wick.zeros(1, 2))
        model.bias = nn.Parameter(wick.full((1,), 3.0))
        got = compiled(x)
    close(got, wick.full((1, 1), 3.0))
    assert compiled.retraces == 1
    assert "parameter weight=" in compiled.log


def test_parameters_updated_in_place_do_not_retrace():
    model = nn.Linear(2, 1)
    compiled = wick.compile(model)
    x = wick.ones(1, 2)
    with wick.no_grad():
        compiled(x)
        model.weight.fill_(1.0)
        model.bias.fill_(0.5)
        got = compiled(x)
    close(got, wick.full((1, 1), 2.5))
    assert compiled.retraces == 0


def test_grad_mode_is_a_guard():
    model = nn.Linear(3, 2)
    compiled = wick.compile(model)
    x = wick.ones(2, 3)
    with wick.no_grad():
        compiled(x)
    compiled(x)
    assert compiled.retraces == 1
    assert "grad mode=on (was grad mode=off)" in compiled.log


def test_autocast_is_a_guard():
    fn = lambda a, b: a @ b
    compiled = wick.compile(fn)
    a, b = wick.randn(4, 8), wick.randn(8, 4)
    assert compiled(a, b).dtype == wick.float32
    with wick.autocast("cpu", dtype=wick.bfloat16):
        got = compiled(a, b)
        want = fn(a, b)
    assert got.dtype == want.dtype == wick.bfloat16
    assert compiled.retraces == 1
    assert "autocast on cpu=bfloat16 (was autocast on cpu=off)" in compiled.log


def test_cache_size_limit_falls_back_to_eager():
    fn = lambda x: x * 2
    compiled = wick.compile(fn, cache_size_limit=2)
    for n in (1, 2, 3, 4):
        close(compiled(wick.ones(n)), wick.full((n,), 2.0))
    assert compiled.traces == 2
    assert compiled.eager_calls == 2
    assert "cache full (2 traces)" in compiled.log


def test_bad_cache_size_limit():
    with pytest.raises(ValueError, match="cache_size_limit"):
        wick.compile(lambda x: x, cache_size_limit=0)


# ---- graph breaks -----------------------------------------------------------------------------

def branchy(x):
    if x.sum() > 0:  # a data-dependent branch
        return x * 2
    return x * 3


def test_data_dependent_branch_breaks_the_graph_and_names_the_line():
    compiled = wick.compile(branchy)
    with pytest.warns(UserWarning, match=r"bool\(t\) at .*test_compile_guards.py:\d+"):
        close(compiled(wick.ones(3)), wick.full((3,), 2.0))
    close(compiled(-wick.ones(3)), wick.full((3,), -3.0))  # not frozen at the first branch
    close(compiled(wick.ones(3)), wick.full((3,), 2.0))
    assert len(compiled.graph_breaks) == 1 and "bool(t)" in compiled.graph_breaks[0]
    assert compiled.eager_calls == 2


@pytest.mark.parametrize("read", ["item", "float", "int", "tolist", "numpy"])
def test_every_conversion_to_python_breaks(read):
    conv = {"item": lambda t: t.item(), "float": float, "int": int,
            "tolist": lambda t: t.tolist(), "numpy": lambda t: float(t.numpy())}[read]

    def scale(x):
        return x * conv(x.sum())

    compiled = wick.compile(scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled(wick.ones(2))
    close(compiled(wick.full((2,), 2.0)), wick.full((2,), 8.0))
    assert compiled.graph_breaks, read


def test_fullgraph_raises_naming_the_line():
    compiled = wick.compile(branchy, fullgraph=True)
    with pytest.raises(RuntimeError, match=r"fullgraph=True.*bool\(t\) at .*test_compile_guards"):
        compiled(wick.ones(3))


def test_a_function_without_reads_has_no_breaks():
    compiled = wick.compile(lambda x: F.relu(x) * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled(wick.ones(3))
        compiled(wick.ones(3))
    assert compiled.graph_breaks == [] and compiled.eager_calls == 0


def test_trace_warns_about_a_read():
    with pytest.warns(wick.jit.TracerWarning, match=r"bool\(t\)"):
        traced = wick.jit.trace(branchy, (wick.ones(3),))
    assert traced.graph.host_reads



def test_parameter_data_replaced_in_place_retraces():
    # `p.data = ...` keeps the Parameter object but gives it a new layout: replaying the old
    # graph over it would read the new bytes with the old shape.
    model = nn.Linear(2, 1)
    compiled = wick.compile(model)
    with wick.no_grad():
        compiled(wick.ones(1, 2))
        model.weight.data = wick.ones(3, 2)
        model.bias.data = wick.zeros(3)
        got = compiled(wick.ones(1, 2))
    close(got, wick.full((1, 3), 2.0))
    assert "parameter weight has a new layout" in compiled.log


def test_module_to_another_dtype_retraces():
    model = nn.Linear(2, 2)
    compiled = wick.compile(model)
    with wick.no_grad():
        compiled(wick.ones(1, 2))
        model.to(wick.float64)
        got = compiled(wick.ones(1, 2, dtype=wick.float64))
    assert got.dtype == wick.float64
    assert compiled.retraces == 1


# ---- reads inside the library -----------------------------------------------------------------

def _train(opt_name, compiled, clip=None, steps=4):
    wick.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = getattr(wick.optim, opt_name)(net.parameters(), lr=0.1)
    x, y = wick.randn(16, 4), wick.randn(16, 2)

    def step(x, y):
        opt.zero_grad()
        F.mse_loss(net(x), y).backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(net.parameters(), clip)
        opt.step()
        return x

    run = wick.compile(step, warmup=1) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            run(x, y)
    return [p.detach() for p in net.parameters()], run


@pytest.mark.parametrize("opt_name", ["NAdam", "RAdam", "Adamax", "Adagrad"])
def test_optimizers_that_read_their_step_count_on_the_host_are_not_frozen(opt_name):
    want, _ = _train(opt_name, compiled=False)
    got, run = _train(opt_name, compiled=True)
    for g, w in zip(got, want):
        close(g, w, tol=1e-6)
    assert any("step count" in b for b in run.graph_breaks), run.graph_breaks


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_clipping_stays_in_the_graph_and_replays_each_steps_norm(opt_name):
    want, _ = _train(opt_name, compiled=False, clip=0.05, steps=5)
    got, run = _train(opt_name, compiled=True, clip=0.05, steps=5)
    for g, w in zip(got, want):
        close(g, w, tol=1e-5)
    assert run.graph_breaks == [] and run.traces == 1


def test_a_data_dependent_shape_breaks_the_graph():
    compiled = wick.compile(lambda x: x[x > 0] * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(compiled(wick.tensor([1.0, -1.0, 2.0])), wick.tensor([2.0, 4.0]))
    close(compiled(wick.tensor([-1.0, -1.0, 3.0])), wick.tensor([6.0]))
    assert any("nonzero" in b for b in compiled.graph_breaks)


def test_size_one_strides_do_not_matter():
    compiled = wick.compile(lambda x: x * 2)
    a = wick.ones(1, 3)
    b = wick.ones(3, 1).t()  # shape (1, 3), strides (1, 1): the same elements
    close(compiled(a), wick.full((1, 3), 2.0))
    close(compiled(b), wick.full((1, 3), 2.0))
    assert compiled.retraces == 0
    traced = wick.jit.trace(lambda x: x * 2, (a,))
    close(traced(b), wick.full((1, 3), 2.0))


@pytest.mark.parametrize("call, exc, words", [
    (lambda: wick.jit.trace(5, (wick.ones(1),)), TypeError, "wick.jit.trace"),
    (lambda: wick.compile(lambda x: x, freeze="yes"), TypeError, "freeze must be a bool"),
    (lambda: wick.compile(lambda x: x, warmup="1"), TypeError, "warmup must be an int"),
    (lambda: wick.compile(lambda x: x, warmup=-1), ValueError, "warmup"),
    (lambda: wick.compile(lambda x: x, fullgraph=1), TypeError, "fullgraph must be a bool"),
])
def test_bad_options(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
