"""Compiled models on the GPU from Python: a training step replayed as one CUDA Graph launch
(Note [a replay as one CUDA Graph] in jit/executor.cpp) trains exactly like eager, and inference
outputs stay the caller's. Skipped without a GPU."""

import pytest

import wick
import wick.nn.functional as F
from wick import nn

pytestmark = pytest.mark.skipif(not wick.cuda.is_available(), reason="needs a CUDA device")


def mlp():
    wick.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to("cuda")


def batches(n):
    wick.manual_seed(1)
    return [(wick.randn(64, 1, 28, 28).to("cuda"), wick.randint(0, 10, (64,)).to("cuda"))
            for _ in range(n)]


def train(compiled, data):
    model = mlp()
    opt = wick.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    run = wick.compile(step, warmup=1) if compiled else step
    losses = [run(x, y).item() for x, y in data]
    return model, losses, run


def test_training_step_as_a_cuda_graph_equals_eager():
    data = batches(6)
    eager_model, eager_losses, _ = train(False, data)
    model, losses, run = train(True, data)
    info = run.cuda_graph
    assert info["captured"], info["status"]
    # step 1 eager (warmup=1), 2 traced, 3 replayed op by op, 4 captured and launched, 5-6 launched
    assert info["launches"] == 3
    assert losses == pytest.approx(eager_losses, rel=1e-5)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        assert (p - q).abs().max().item() <= 1e-5 * max(1.0, q.abs().max().item())


def test_inference_outputs_are_not_overwritten_by_later_launches():
    model = mlp().eval()
    compiled = wick.compile(model, freeze=True)
    xs = [x for x, _ in batches(4)]
    with wick.no_grad():
        outs = [compiled(x) for x in xs]
        assert compiled.cuda_graph["captured"], compiled.cuda_graph["status"]
        for x, out in zip(xs, outs):
            assert (out - model(x)).abs().max().item() < 1e-5


def test_cuda_graph_by_hand_like_torch():
    static_x = wick.randn(1000).to("cuda")
    y = (static_x * 3).sin()  # warm-up outside the capture
    g = wick.cuda.CUDAGraph()
    with wick.cuda.graph(g):
        y = (static_x * 3).sin()
    assert g.captured and g.num_nodes >= 2
    for _ in range(3):
        fresh = wick.randn(1000)
        static_x.copy_(fresh.to("cuda"))
        g.replay()
        assert (y.cpu() - (fresh * 3).sin()).abs().max().item() < 1e-6
    failed = wick.cuda.CUDAGraph()
    with pytest.raises(RuntimeError):
        with wick.cuda.graph(failed):
            static_x.sum().item()  # a read-back synchronises: not capturable
    assert not failed.captured
