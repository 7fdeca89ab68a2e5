"""Lab 18's graded tests: your planner on traced graphs - a chain, a branch, a training step and
ResNet-20 - against the rules (no two storages live at once share a byte) and against wick's own
planner (jit/passes/memory_plan.cpp), which implements the same heuristic: the same lifetimes and
the same arena, byte for byte. The figures compare the arena with no reuse and with the bound."""

import pytest
import wick
import wick.nn.functional as F
from labkit import figure, impl
from wick.models.resnet import resnet20

L = impl(__file__, "planner")
jit = wick.jit._jit


def chain_graph():
    def f(xs):
        y = xs[0]
        for _ in range(4):
            y = (y * 1.5).sin()  # each step: a scalar fill, a mul, a sin
        return [y.sum()]
    return jit.trace(f, [wick.randn(128, 128)], [])


def branch_graph():
    def f(xs):
        a = xs[0].exp()      # lives until the add at the end
        b = xs[0].sin().cos()
        return [(a + b).relu()]
    return jit.trace(f, [wick.randn(64, 64)], [])


def resnet_graph():
    wick.manual_seed(0)
    model = resnet20().eval()
    params = list(model.named_parameters()) + list(model.named_buffers())
    with wick.no_grad():
        g = jit.trace(lambda xs: [model(*xs)], [wick.randn(8, 3, 32, 32)], params)
    jit.optimize(g, params, {"freeze": True})
    return g


def training_graph():
    wick.manual_seed(0)
    model = wick.nn.Sequential(wick.nn.Flatten(), wick.nn.Linear(784, 64), wick.nn.ReLU(),
                               wick.nn.Linear(64, 10))
    opt = wick.optim.SGD(model.parameters(), lr=0.1)

    def step(xs):
        opt.zero_grad()
        loss = F.cross_entropy(model(xs[0]), xs[1])
        loss.backward()
        opt.step()
        return [loss]
    return jit.trace(step, [wick.randn(16, 1, 28, 28), wick.randint(0, 10, (16,))], [])


def empty_batch_graph():
    def f(xs):
        w = wick.ones(64, 32) * 2            # 8 KiB to place
        a = xs[0].exp()                      # a batch of 0: no bytes, nothing to place
        return [(a @ w).relu().sum(dim=1), w.sum()]
    return jit.trace(f, [wick.randn(0, 64)], [])


GRAPHS = {"chain": chain_graph, "branch": branch_graph, "training step": training_graph,
          "resnet20": resnet_graph, "empty batch": empty_batch_graph}


def test_round_up():
    assert [L.round_up(n) for n in (0, 1, 64, 65, 4096, 4097)] == [0, 64, 64, 128, 4096, 4160]


def test_lifetimes_of_a_branch():
    g = branch_graph()
    spans = L.lifetimes(g)
    names = {b: next(n["name"] for n in g.node_info if b in n["outputs"]) for b in spans}
    assert sorted(names.values()) == ["add", "cos", "exp", "sin"]  # not relu: it is returned
    exp = next(b for b, n in names.items() if n == "exp")
    add = next(i for i, n in enumerate(g.node_info) if n["name"] == "add")
    assert spans[exp] == (0, add)  # written first, read last by the add


@pytest.mark.parametrize("name", list(GRAPHS))
def test_lifetimes_match_wicks(name):
    g = GRAPHS[name]()
    mine = L.lifetimes(g)
    assert mine == jit.plan_memory(g)["lifetimes"]


@pytest.mark.parametrize("name", list(GRAPHS))
def test_plan_is_valid_and_bounded(name):
    g = GRAPHS[name]()
    spans = L.lifetimes(g)
    offsets, arena = L.plan(g, spans)
    assert set(offsets) == set(spans)
    size = {b: L.round_up(g.values[b]["nbytes"]) for b in spans}
    for a in spans:
        assert offsets[a] % L.ALIGNMENT == 0 and offsets[a] + size[a] <= arena
        for b in spans:
            together = a < b and spans[a][0] <= spans[b][1] and spans[b][0] <= spans[a][1]
            apart = offsets[a] + size[a] <= offsets[b] or offsets[b] + size[b] <= offsets[a]
            assert not together or apart, f"storages {a} and {b} are live together and overlap"
    peak = L.live_peak(g, spans)
    assert peak <= arena <= sum(size.values())


@pytest.mark.parametrize("name", list(GRAPHS))
def test_plan_matches_wicks(name):
    g = GRAPHS[name]()
    spans = L.lifetimes(g)
    offsets, arena = L.plan(g, spans)
    wicks = jit.plan_memory(g)
    assert arena == wicks["arena_bytes"]
    assert offsets == wicks["offsets"]
    assert L.live_peak(g, spans) == wicks["live_peak_bytes"]
    total = sum(L.round_up(g.values[b]["nbytes"]) for b in spans)
    figure(f"{name}: no reuse / your arena / live peak (KiB)",
           f"{total / 1024:.0f} / {arena / 1024:.0f} / {L.live_peak(g, spans) / 1024:.0f}")


def test_chain_needs_two_buffers():
    g = chain_graph()
    spans = L.lifetimes(g)
    _, arena = L.plan(g, spans)
    # An op's input and output, and one scalar operand (a fill) at a time.
    assert arena == 2 * L.round_up(128 * 128 * 4) + 64
