"""wick.jit.trace and wick.compile: compiled results equal eager, guards retrace and count it,
the graph prints and draws, bad input raises PyTorch's exception types."""

import pytest

import wick
from wick import nn
import wick.nn.functional as F
from wick.models.resnet import resnet20


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.drop = nn.Dropout(0.25)  # in training, a random mask on every call
        self.fc = nn.Linear(16 * 12 * 12, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(self.drop(x).flatten(1))


def assert_equal(got, want, rtol=1e-6, atol=0.0):
    assert tuple(got.shape) == tuple(want.shape)
    g, w = got.tolist(), want.tolist()
    flat_g, flat_w = wick.tensor(g).flatten().tolist(), wick.tensor(w).flatten().tolist()
    for i, (a, b) in enumerate(zip(flat_g, flat_w)):
        assert abs(a - b) <= atol + rtol * abs(b), f"element {i}: {a} != {b}"


@pytest.mark.parametrize("make", [MLP, CNN], ids=["mlp", "cnn"])
def test_trace_replays_like_eager(make):
    wick.manual_seed(0)
    model = make().eval()
    x = wick.randn(4, 1, 28, 28)
    traced = wick.jit.trace(model, (x,))
    assert_equal(traced(x), model(x), rtol=0)  # bit-identical
    x2 = wick.randn(4, 1, 28, 28)
    assert_equal(traced(x2), model(x2), rtol=0)
    text = traced.code
    print(text)
    assert text.startswith("graph(%x0: f32[4, 1, 28, 28]):")
    assert "%fc1.weight: f32[64, 784] = parameter" in text or "%fc.weight" in text
    assert "return %" in text
    assert traced.graph.dot("g").startswith('digraph "g" {')


def test_compile_retraces_on_new_shape_and_dtype_and_counts():
    wick.manual_seed(1)
    model = MLP()
    compiled = wick.compile(model)
    x = wick.randn(8, 1, 28, 28)
    assert_equal(compiled(x), model(x))
    compiled(wick.randn(8, 1, 28, 28))
    assert (compiled.traces, compiled.retraces) == (1, 0)
    y = wick.randn(3, 1, 28, 28)
    assert_equal(compiled(y), model(y))
    assert compiled.retraces == 1
    model64 = MLP().double()
    c64 = wick.compile(model64)
    c64(wick.randn(2, 1, 28, 28, dtype=wick.float64))
    compiled(wick.randn(8, 1, 28, 28))  # seen: no retrace
    assert compiled.retraces == 1
    print(compiled.log)
    assert "trace 2" in compiled.log


def test_compiled_sees_optimizer_updates():
    wick.manual_seed(2)
    model = MLP()
    compiled = wick.compile(model)
    x = wick.randn(4, 1, 28, 28)
    compiled(x)
    opt = wick.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).sum()
    loss.backward()
    opt.step()
    assert_equal(compiled(x), model(x))


def test_cuda_graph_status_says_why_a_graph_is_not_captured():
    model = MLP()
    x = wick.randn(4, 1, 28, 28)
    compiled = wick.compile(model)
    for _ in range(3):  # a GPU graph would be captured on the third call
        compiled(x)
    info = compiled.cuda_graph
    assert info["captured"] is False and info["launches"] == 0
    assert "runs on cpu" in info["status"], info
    off = wick.compile(model, cuda_graph=False)
    off(x)
    assert "cuda_graph is off" in off.cuda_graph["status"]
    assert_equal(off(x), compiled(x))


def resnet20_in_eval(seed):
    """A seeded ResNet-20 in eval mode, an input batch of two and its eager output."""
    wick.manual_seed(seed)
    model = resnet20().eval()
    x = wick.randn(2, 3, 32, 32)
    with wick.no_grad():
        return model, x, model(x)


def test_resnet20_inference_folded_and_fused():
    model, x, want = resnet20_in_eval(3)
    exact = wick.compile(model, fuse=False)
    fast = wick.compile(model, freeze=True)
    with wick.no_grad():  # inference: batch_norm is one kernel only without grad mode
        assert_equal(exact(x), want, rtol=0)
        assert_equal(fast(x), want, rtol=1e-4, atol=1e-4)  # folding rounds elsewhere
    print(fast.log)
    assert "batch_norm" not in fast.graph.nodes
    assert "conv2d+[add, relu]" in fast.graph.nodes  # the residual add as a conv's epilogue
    assert fast.kernels_per_run < exact.kernels_per_run
    plan = fast.memory_plan
    assert plan["live_peak_bytes"] <= plan["arena_bytes"] < plan["total_bytes"]


def test_frozen_graph_folds_batch_norm_with_grad_mode_on():
    # The parameters need gradients and the call is made in grad mode, as a user would make it:
    # a frozen graph is still traced as inference, so batch norm is the one kernel the folding
    # pass recognises (traced with autograd, it was four elementwise ops and never folded).
    model, x, want = resnet20_in_eval(5)
    fast = wick.compile(model, freeze=True)
    got = fast(x)
    print(fast.log)
    assert "conv+bn folding: 19 " in fast.log
    assert not got.requires_grad
    assert_equal(got, want, rtol=1e-4, atol=1e-4)
    nodes = fast.graph.nodes
    assert nodes.count("conv2d+[relu]") == 10 and nodes.count("conv2d+[add, relu]") == 9
    assert not any(n.startswith(("conv2d+[sub", "batch_norm")) for n in nodes)


def test_conv_epilogue_is_bit_exact_and_saves_kernels():
    wick.manual_seed(4)
    model = resnet20().eval()
    x = wick.randn(3, 3, 32, 32)
    separate = wick.compile(model, freeze=True, conv_epilogue=False)
    fused = wick.compile(model, freeze=True)
    with wick.no_grad():
        assert_equal(fused(x), separate(x), rtol=0)
    nodes = fused.graph.nodes
    print(fused.log)
    # The stem and each block's first convolution take their ReLU, each block's second one the
    # residual add and ReLU (in the two downsampling blocks, two kernels: their shortcut is
    # written into slices, so elementwise fusion leaves add and relu apart): 21 kernels fewer.
    assert nodes.count("conv2d+[relu]") == 10 and nodes.count("conv2d+[add, relu]") == 9
    assert "relu" not in nodes and "fused[add, relu]" not in nodes
    assert fused.kernels_per_run == separate.kernels_per_run - 21
    assert "conv epilogue fusion: 19" in fused.log


def test_passes_from_python_print_before_and_after():
    def f(x):
        a, b = x.exp(), x.exp()
        unused = x.sin()  # noqa: F841
        return (a + b).relu()

    x = wick.randn(5, 3)
    graph = wick.jit._jit.trace(lambda xs: [f(*xs)], [x], [])
    before = str(graph)
    assert wick.jit._jit.eliminate_common_subexpressions(graph) == 1
    assert wick.jit._jit.eliminate_dead_code(graph) == 1
    assert wick.jit._jit.fuse_elementwise(graph) == 1
    print(before, graph, sep="\n")
    assert graph.nodes == ["exp", "fused[add, relu]"]
    out = wick.jit._jit.Executor(graph, []).run([x])[0]
    assert_equal(out, f(x), rtol=0)


def test_dispatch_counter_counts_eager_kernels():
    x = wick.randn(3)
    with wick.jit.DispatchCounter() as counter:
        (x.exp() + 1).relu()
    assert counter.count >= 3


def test_bad_inputs():
    model = MLP()
    traced = wick.jit.trace(model, wick.randn(2, 1, 28, 28))
    with pytest.raises(ValueError, match=r"jit.Executor.*\(2, 1, 28, 28\)"):
        traced(wick.randn(3, 1, 28, 28))
    with pytest.raises(TypeError, match="float32"):
        traced(wick.randn(2, 1, 28, 28, dtype=wick.float64))
    with pytest.raises(ValueError, match="takes 1 inputs; got 2"):
        traced(wick.randn(2, 1, 28, 28), wick.randn(2, 1, 28, 28))
    with pytest.raises(TypeError, match="example input 0 is int"):
        wick.jit.trace(model, [3])
    with pytest.raises(TypeError, match="unexpected keyword argument 'fusion'"):
        wick.compile(model, fusion=True)
    with pytest.raises(TypeError, match="must return a Tensor"):
        wick.jit.trace(lambda x: 3, wick.randn(2))


def test_dropout_replays_fresh_masks_like_eager():
    dropout = nn.Dropout(0.5).train()
    x = wick.ones(4, 64)
    wick.manual_seed(9)
    eager = [dropout(x), dropout(x)]
    wick.manual_seed(9)
    compiled = wick.compile(dropout)
    got = [compiled(x), compiled(x)]  # traced, then replayed with new counters
    assert_equal(got[0], eager[0], rtol=0)
    assert_equal(got[1], eager[1], rtol=0)
    assert got[0].tolist() != got[1].tolist()


OPTIMIZERS = {
    "sgd": lambda params: wick.optim.SGD(params, lr=0.05, momentum=0.9),
    "adam": lambda params: wick.optim.Adam(params, lr=1e-2),
    "adamw": lambda params: wick.optim.AdamW(params, lr=1e-2, weight_decay=0.1),
}


def _train(make, compiled, steps, shape, optimizer="sgd"):
    wick.manual_seed(11)
    model = make()
    opt = OPTIMIZERS[optimizer](model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    run = wick.compile(step, warmup=1) if compiled else step
    losses = []
    for i in range(steps):
        wick.manual_seed(100 + i)
        x, y = wick.randn(*shape), wick.randint(0, 10, (shape[0],))
        losses.append(run(x, y).item())
    if compiled:
        assert (run.traces, run.retraces) == (1, 0)
        print(run.log)
    return [p.detach().clone() for p in model.parameters()], losses


@pytest.mark.parametrize("make,shape", [(MLP, (16, 1, 28, 28)), (CNN, (8, 1, 28, 28)),
                                        (resnet20, (4, 3, 32, 32))], ids=["mlp", "cnn", "resnet20"])
def test_compiled_training_steps_equal_eager(make, shape):
    steps = 5  # one eager warm-up step, one traced, three replayed
    eager_params, eager_losses = _train(make, False, steps, shape)
    jit_params, jit_losses = _train(make, True, steps, shape)
    assert jit_losses == eager_losses
    for a, b in zip(jit_params, eager_params):
        assert_equal(a, b)


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
@pytest.mark.parametrize("make,shape", [(MLP, (16, 1, 28, 28)), (CNN, (8, 1, 28, 28))],
                         ids=["mlp", "cnn"])
def test_compiled_adam_steps_equal_eager(make, shape, optimizer):
    """Adam's bias corrections change every step: the replay reads the step count that the
    traced add_ increments, so the three replayed steps match eager's."""
    steps = 5
    eager_params, eager_losses = _train(make, False, steps, shape, optimizer)
    jit_params, jit_losses = _train(make, True, steps, shape, optimizer)
    assert jit_losses == eager_losses
    for a, b in zip(jit_params, eager_params):
        assert_equal(a, b)


def test_compiled_adam_advances_the_step_count_and_its_correction():
    """A replay that used a number fixed at trace time would correct every step as the traced
    one (step 2); the fifth step's update must be Adam's for step 5, computed here by hand."""
    model = MLP()
    opt = wick.optim.Adam(model.parameters(), lr=1e-2)

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        return x

    run = wick.compile(step, warmup=1)
    x = wick.randn(2, 1, 28, 28)
    for _ in range(4):
        run(x)
    assert "adam_step" in str(run.graph) and (run.traces, run.retraces) == (1, 0)
    state = opt.state_dict()["state"]
    assert {float(s["step"]) for s in state.values()} == {4.0}
    weight = next(iter(model.parameters()))
    before = weight.detach().clone()
    run(x)
    after = opt.state_dict()["state"][0]
    assert float(after["step"]) == 5.0
    m, v = after["exp_avg"], after["exp_avg_sq"]
    want = before - 1e-2 / (1 - 0.9**5) * m / ((v / (1 - 0.999**5)).sqrt() + 1e-8)
    assert_equal(weight.detach(), want, rtol=1e-5, atol=1e-7)


def test_training_step_accumulates_linear_weight_gradients_without_a_copy():
    # Note [gradients in their input's layout]: a Linear's weight gradient leaves the matrix
    # product in the weight's own layout, so no strided copy of the weight follows it.
    model = MLP()
    opt = wick.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        return x

    run = wick.compile(step, warmup=1)
    for _ in range(2):
        run(wick.randn(16, 1, 28, 28), wick.randint(0, 10, (16,)))
    graph = str(run.graph)
    print(graph)
    assert "sgd_step" in graph
    assert "f32[64, 784] = copy(" not in graph and "f32[10, 64] = copy(" not in graph


def test_compile_rejects_a_negative_warmup():
    with pytest.raises(ValueError, match="warmup"):
        wick.compile(lambda x: x, warmup=-1)


def test_compiled_on_the_sim_device_replays_its_fallbacks():
    """sim has no convolution or pooling kernel: eager runs them on the CPU between copies. The
    trace records the op, not the copies (they are part of the call), and the replay falls back
    the same way, so a new input gives eager's result."""
    wick.manual_seed(4)
    model = CNN().eval().to("sim")
    compiled = wick.compile(model)
    with wick.backends.fallback.fallback_mode("silent"), wick.no_grad():
        compiled(wick.randn(2, 1, 28, 28).to("sim"))
        x = wick.randn(2, 1, 28, 28).to("sim")
        got, want = compiled(x), model(x)
        assert "conv2d" in compiled.graph.nodes and "copy" not in compiled.graph.nodes
    assert_equal(got.to("cpu"), want.to("cpu"), rtol=0)


def test_outputs_of_earlier_calls_survive_later_ones():
    """Intermediates share one arena across calls; what a call returns never lives there."""
    wick.manual_seed(5)
    model = CNN().eval()
    compiled = wick.compile(model, freeze=True)
    x1, x2 = wick.randn(3, 1, 28, 28), wick.randn(3, 1, 28, 28)
    with wick.no_grad():
        first = compiled(x1)
        kept = first.clone()
        compiled(x2)
        compiled(x2)
    assert_equal(first, kept, rtol=0)
    assert compiled.memory_plan["arena_bytes"] > 0


def test_graph_shows_the_cuda_kernel_of_each_fused_chain():
    """A CPU graph's fused chain as the CUDA C++ a GPU would compile for it (Note [fused chains
    compiled at run time]); in a CUDA build NVRTC translates it to PTX here, without a GPU."""
    def f(x, b):
        return ((x + b).relu() * 0.5).exp()

    compiled = wick.compile(f)
    x, b = wick.randn(4, 3), wick.randn(3)
    assert wick.allclose(compiled(x, b), f(x, b))
    (source,) = compiled.graph.cuda_sources()
    assert "in1[wick_fused_offset(i, l1)]" in source  # b is broadcast over the rows
    for op in ("add", "relu", "mul", "exp"):
        assert f"wick::scalar::{op}_fn()" in source
    if not wick._C._jit.cuda_fusion_available():
        pytest.skip("a build without CUDA has no NVRTC")
    ptx = wick._C._jit.nvrtc_compile(source, "compute_90")
    assert b".entry wick_fused" in ptx
    with pytest.raises(RuntimeError, match="did not compile for compute_90"):
        wick._C._jit.nvrtc_compile(source.replace("exp_fn", "no_such_fn"), "compute_90")
