"""A re-probe of the classes of bad input with new, randomly generated cases.

Each case is a short program written against `T` (the library), `F` and `nn`, `optim`, run once
with T = wick and once with T = torch, each case in a child process with a timeout, so a crash or
a hang costs one case, not the run. A case either must raise (bad input) or must succeed (input
that once crashed or corrupted results: deep graphs, concurrent backward). wick's outcome is:

  clear    raised, and the message names the op or function (one of the case's names)
  unclear  raised, but the message names none of them, or is empty
  silent   returned where it must raise (or where PyTorch raises), or computed a wrong result
  crash    the process died (signal or abort)
  hang     the case ran past its timeout
  ok       a must-succeed case succeeded

    python3 tests/python/bad_inputs/reprobe.py --seed 7 --per-class 30
prints the table per class and exits 1 on any crash, hang or silent wrong answer."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import random
import subprocess
import sys
import tempfile
import threading
from collections import Counter

HUGE = [2**31, 2**33, 2**40, 2**62, 2**63 - 1]


@dataclasses.dataclass
class Case:
    cls: str            # the class of mistake: overflow, index, overlap, mismatch, state, file, loader,
    #                     threads, compile, quant, sequence, optim
    names: tuple        # the message must contain one of these (the op or function)
    code: str           # a program over T, F, nn, optim; may use WICK (True when T is wick)
    expect: str = "raise"  # "raise" or "ok"
    timeout: float = 10.0


def _overflow(rng):
    a, b = rng.choice(HUGE), rng.choice(HUGE)
    fn = rng.choice(["empty", "zeros", "ones", "rand", "randn"])
    n = rng.choice([2**62, 2**63 - 1])
    k = rng.choice([2**31, 2**40, 2**62])
    return rng.choice([
        Case("overflow", (fn,), f"T.{fn}({a}, {b}, 4)"),
        Case("overflow", ("full",), f"T.full(({a}, {b}, 2), 1.0)"),
        Case("overflow", ("arange",), f"T.arange({n})"),
        Case("overflow", ("arange",), f"T.arange(0, {rng.choice(['1e20', '1e30', '2.0**70'])})"),
        Case("overflow", ("linspace",), f"T.linspace(0, 1, {n})"),
        Case("overflow", ("eye",), f"T.eye({rng.choice([2**32, 2**40])})"),
        Case("overflow", ("eye",), f"T.eye(8, {n})"),
        Case("overflow", ("one_hot",), f"F.one_hot(T.tensor([0, 1]), {rng.choice([2**61, 2**62])})"),
        Case("overflow", ("contiguous", "expand"), f"T.ones(1, 1).expand({a}, {b}).contiguous()"),
        Case("overflow", ("add", "mul", "broadcast"),
             f"T.ones(1, 1).expand({a}, 1) {rng.choice(['+', '*'])} T.ones(1, 1).expand(1, {b})"),
        Case("overflow", ("cat",), f"T.cat([T.ones(1).expand({n}), T.ones(1).expand({n})])"),
        Case("overflow", ("stack",), f"T.stack([T.ones(1, 1).expand({a}, {b})] * 2)"),
        Case("overflow", ("adaptive_avg_pool2d",), f"F.adaptive_avg_pool2d(T.ones(1, 1, 4, 4), {k})"),
        Case("overflow", ("max_pool2d",), f"F.max_pool2d(T.ones(1, 1, 4, 4), {k})"),
        Case("overflow", ("avg_pool2d",), f"F.avg_pool2d(T.ones(1, 1, 4, 4), {k})"),
        Case("overflow", ("narrow",), f"T.ones(4).narrow(0, 1, {n})"),
        Case("overflow", ("as_strided",), f"T.as_strided(T.ones(4), (2,), ({rng.choice([2**62, 2**61])},))"),
        Case("overflow", ("reshape", "view"), f"T.ones(2).reshape({a}, {b})"),
        Case("overflow", ("repeat",), f"T.ones(2).repeat({a}, {b})"),
    ])


def _index(rng):
    bad = rng.choice([-1, 3, 7, 2**40])
    neg = rng.choice([-4, -9, 3, 2**40])
    return rng.choice([
        Case("index", ("embedding",), f"F.embedding(T.tensor([0, {bad}]), T.ones(3, 2))"),
        Case("index", ("index_select",), f"T.ones(3).index_select(0, T.tensor([{bad if bad >= 0 else 3}]))"),
        Case("index", ("gather",), f"T.ones(3).gather(0, T.tensor([{bad}]))"),
        Case("index", ("scatter_add",), f"T.zeros(3).scatter_add(0, T.tensor([{bad}]), T.ones(1))"),
        Case("index", ("index", "out of"), f"T.ones(3)[{neg}]"),
        Case("index", ("select",), f"T.ones(3).select(0, {neg})"),
        Case("index", ("narrow",), f"T.ones(3).narrow(0, {neg}, 1)"),
        Case("index", ("cross_entropy", "nll_loss", "target"),
             f"F.cross_entropy(T.ones(2, 3), T.tensor([0, {rng.choice([3, -1, -5])}]))"),
        Case("index", ("cross_entropy", "nll_loss", "target"),
             f"F.cross_entropy(T.ones(2, 3), T.tensor([0, -1]), weight=T.ones(3))"),
        Case("index", ("nll_loss", "target"), f"F.nll_loss(T.ones(2, 3), T.tensor([{rng.choice([3, -2])}, 0]))"),
        Case("index", ("one_hot",), f"F.one_hot(T.tensor([{rng.choice([3, -1])}]), 3)"),
        Case("index", ("padding_idx", "embedding"), f"nn.Embedding(3, 2, padding_idx={rng.choice([3, 5, -4])})"),
        Case("index", ("dim", "sum"), f"T.ones(2, 2).sum({rng.choice([2, -3, 5])})"),
        Case("index", ("transpose", "dim"), f"T.ones(2, 2).transpose(0, {rng.choice([2, -3])})"),
    ])


def _overlap(rng):
    k = rng.randint(1, 4)
    op = rng.choice(["add_", "sub_", "mul_", "div_", "copy_"])
    return rng.choice([
        Case("overlap", (op, op.rstrip("_")), f"x = T.arange(10.0); x[{k}:].{op}(x[:-{k}])"),
        Case("overlap", (op, op.rstrip("_")), f"x = T.arange(10.0); x[:-{k}].{op}(x[{k}:])"),
        Case("overlap", (op, op.rstrip("_")), f"x = T.arange(16.0).reshape(4, 4); x.{op}(x.t())"),
    ])


def _mismatch(rng):
    a, b = rng.randint(2, 5), rng.randint(6, 9)
    op = rng.choice(["add", "mul", "sub", "div", "maximum", "minimum", "eq"])
    return rng.choice([
        Case("mismatch", (op, "broadcast"), f"T.{op}(T.ones({a}, 3), T.ones({b}, 3))"),
        Case("mismatch", ("matmul",), f"T.ones(2, {a}) @ T.ones({b}, 2)"),
        Case("mismatch", ("mm",), f"T.mm(T.ones(2, {a}), T.ones({b}, 2))"),
        Case("mismatch", ("bmm",), f"T.bmm(T.ones(2, 2, {a}), T.ones(3, {b}, 2))"),
        Case("mismatch", ("linear", "matmul"), f"F.linear(T.ones(2, {a}), T.ones(3, {b}))"),
        Case("mismatch", ("conv2d",), f"F.conv2d(T.ones(1, {a}, 5, 5), T.ones(2, {b}, 3, 3))"),
        Case("mismatch", ("pow",), f"T.tensor([2, 3]) ** {rng.choice([-1, -2])}"),
        Case("mismatch", ("max_pool2d", "stride"), "F.max_pool2d(T.ones(1, 1, 4, 4), 2, stride=0)"),
        Case("mismatch", ("avg_pool2d", "stride"), "F.avg_pool2d(T.ones(1, 1, 4, 4), 2, stride=0)"),
        Case("mismatch", ("cross_entropy",), f"F.cross_entropy(T.ones(2, 3), T.ones(2, {b}))"),
        Case("mismatch", ("cross_entropy", "weight"),
             f"F.cross_entropy(T.ones(2, 3), T.tensor([0, 1]), weight=T.ones({b}))"),
        Case("mismatch", ("layer_norm",), f"F.layer_norm(T.ones(2, 3), ({b},))"),
        Case("mismatch", ("mse_loss", "broadcast", "size"), f"F.mse_loss(T.ones({a}), T.ones({b}))"),
        Case("mismatch", ("linear", "in_features"), f"nn.Linear({-a}, 3)"),
        Case("mismatch", ("reshape", "view", "shape"), f"T.ones({a}, 3).reshape({b}, -1)"),
    ])


def _state(rng):
    opt = rng.choice(["SGD(m.parameters(), lr=0.1, momentum=0.9)", "Adam(m.parameters(), lr=0.1)"])
    name = opt.split("(")[0]
    k = rng.choice([2, 4, 5])
    setup = (f"m = nn.Linear(3, 2); o = optim.{opt}; m(T.ones(1, 3)).sum().backward(); o.step(); ")
    key = "momentum_buffer" if name == "SGD" else rng.choice(["exp_avg", "exp_avg_sq"])
    return rng.choice([
        Case("state", (name, name.lower()),
             setup + f"m.weight.data = T.ones(2, {k}); m.weight.grad = T.ones(2, {k}); o.step()"),
        Case("state", (name, "load_state_dict", key),
             setup + f"sd = o.state_dict(); del sd['state'][0]['{key}']; o.load_state_dict(sd); "
                     "m(T.ones(1, 3)).sum().backward(); o.step()"),
        Case("state", ("grad", "dtype", "type"), "m = nn.Linear(3, 2); m.weight.grad = T.ones(2, 3, dtype=T.float64)"),
        Case("state", ("grad", "size", "shape"), f"m = nn.Linear(3, 2); m.weight.grad = T.ones(2, {k})"),
        Case("state", ("load_state_dict", "weight", "size"),
             f"m = nn.Linear(3, 2); m.load_state_dict({{'weight': T.ones(2, {k}), 'bias': T.ones(2)}})"),
        Case("state", ("manual_seed", "seed"), f"T.manual_seed({rng.choice(['1.5', '0.25', 'None'])})"),
    ])


def _file(rng, tmp):
    path = os.path.join(tmp, f"f{rng.randrange(10**9)}.safetensors")
    return rng.choice([
        Case("file", ("No such file", path[-20:]), f"T.load({path!r})"),
        Case("file", ("directory", tmp[-12:]), f"T.load({tmp!r})"),
    ])


def _loader(rng):
    return rng.choice([
        Case("loader", ("timeout",), "T.utils.data.DataLoader(list(range(10)), timeout=-1)"),
        Case("loader", ("prefetch_factor",),
             f"T.utils.data.DataLoader(list(range(10)), num_workers=2, prefetch_factor={rng.choice([0, -1])})"),
        Case("loader", ("batch_size",), f"T.utils.data.DataLoader(list(range(10)), batch_size={rng.choice([0, -2])})"),
        Case("loader", ("num_workers",), "T.utils.data.DataLoader(list(range(10)), num_workers=-1)"),
        Case("loader", ("worker_init_fn", "boom"),
             "def init(i):\n    raise ValueError('boom')\n"
             "list(T.utils.data.DataLoader(list(range(10)), num_workers=2, worker_init_fn=init))"),
        Case("loader", ("timed out", "timeout"),
             "import time\nclass Slow:\n    def __len__(self): return 4\n"
             "    def __getitem__(self, i): time.sleep(30); return i\n"
             "list(T.utils.data.DataLoader(Slow(), num_workers=1, timeout=1))"),
    ])


def _threads(rng):
    n = rng.choice([4, 8])
    return rng.choice([
        Case("threads", (), "import threading\nw = T.ones(3, requires_grad=True)\n"
             "def work():\n    for _ in range(300): (w * 2).sum().backward()\n"
             f"ts = [threading.Thread(target=work) for _ in range({n})]\n"
             "[t.start() for t in ts]; [t.join() for t in ts]\n"
             f"assert float(w.grad[0]) == 2 * 300 * {n}, f'WRONG: {{float(w.grad[0])}}'", expect="ok"),
        Case("threads", (), "x = T.ones(1, requires_grad=True); y = x\n"
             f"for _ in range({rng.choice([10**5, 3 * 10**5])}): y = y * 1.0\n"
             "y.sum().backward(); del y", expect="ok", timeout=60),
        Case("threads", (), "x = T.ones(1, requires_grad=True); y = x\n"
             "for _ in range(10**6): y = y + 0.0\ndel y", expect="ok", timeout=60),
    ])


# The newer features: wick-only APIs (wick.compile, wick.quantization, nn.quantized) are reached
# through WICK; under PyTorch those names raise, which only matters when wick does not.

def _compile(rng):
    a, b = rng.randint(2, 5), rng.randint(6, 9)
    bad_dtype = rng.choice(["float64", "int64", "int32"])
    kind = rng.choice(["3", "x.sum().item()", "x.tolist()", "None", "{'y': x}", "(x, 1)"])
    index = rng.choice([3, 7, -4, 2**40])
    indexing = rng.choice(["x.gather(0, i)", "x.index_select(0, i)",
                           "T.zeros(3).scatter_add(0, i, x[:1])"])
    option = rng.choice(["mode", "backend", "fullgraph"])
    head = f"m = nn.Linear({a}, 2)\n"
    return rng.choice([
        Case("compile", ("jit.Executor",),
             head + f"t = T.jit.trace(m, T.ones(1, {a}))\nt(T.ones({rng.randint(1, 4)}, {b}))"),
        Case("compile", ("jit.Executor",),
             head + f"t = T.jit.trace(m, T.ones(1, {a}))\nt(T.ones(1, {a}, dtype=T.{bad_dtype}))"),
        Case("compile", ("wick.jit",), f"T.compile(lambda x: {kind})(T.ones(2))"),
        Case("compile", ("wick.jit",), f"T.jit.trace(lambda x: {kind}, T.ones(2))"),
        Case("compile", ("add", "broadcast"),
             f"T.compile(lambda x, y: x + y)(T.ones({a}), T.ones({b}))"),
        Case("compile", ("matmul",), f"T.compile(lambda x: x @ T.ones({b}, 2))(T.ones(2, {a}))"),
        Case("compile", ("linear",),
             head + f"c = T.compile(m)\nc(T.ones(1, {a}))\nc(T.ones(3, {b}))"),
        Case("compile", ("wick.compile",), head + f"T.compile(m, warmup={-rng.randint(1, 9)})"),
        Case("compile", ("wick.compile",), head + f"T.compile(m, {option}=1)"),
        Case("compile", ("expand", "contiguous", "reshape"),
             f"T.compile(lambda x: x.expand({rng.choice(HUGE)}, {rng.choice(HUGE)}).contiguous())"
             "(T.ones(1, 1))"),
        # An index read from an input: the replay's kernels check it, not the traced values.
        Case("compile", ("gather", "index_select", "scatter_add"),
             f"c = T.compile(lambda x, i: {indexing})\n"
             "c(T.ones(3), T.tensor([1])); c(T.ones(3), T.tensor([1]))\n"
             f"c(T.ones(3), T.tensor([{index}]))"),
    ])


def _quantization(rng):
    qmin, qmax = rng.choice([(0, 255), (-128, 127), (0, 15)])
    bad_scale = rng.choice(["0.0", "-0.1", "float('nan')"])
    bad_zp = rng.choice([qmax + rng.randint(1, 100), qmin - rng.randint(1, 100)])
    bad_value = rng.choice(["float('nan')", "float('inf')", "-float('inf')"])
    fq = "(T.quantization if WICK else T).fake_quantize_per_tensor_affine"
    q = "Q = T.quantization if WICK else T.ao.quantization\n"
    observer = rng.choice(["MinMaxObserver", "MovingAverageMinMaxObserver", "HistogramObserver"])
    return rng.choice([
        Case("quant", ("fake_quantize_per_tensor_affine",),
             f"{fq}(T.ones(3), {bad_scale}, 0, {qmin}, {qmax})"),
        Case("quant", ("fake_quantize_per_tensor_affine",),
             f"{fq}(T.ones(3), 0.1, {bad_zp}, {qmin}, {qmax})"),
        Case("quant", ("fake_quantize_per_tensor_affine",),
             f"{fq}(T.ones(3), 0.1, 0, {qmax}, {qmin})"),
        Case("quant", ("fake_quantize_per_channel_affine",),
             f"(T.quantization if WICK else T).fake_quantize_per_channel_affine(T.ones(2, 3), T.ones(2), "
             f"T.zeros(2, dtype=T.int32 if not WICK else T.int64), {rng.choice([2, 5, -3])}, 0, 255)"),
        Case("quant", ("calculate_qparams", "histc"),
             q + f"o = Q.{observer}()\no(T.tensor([1.0, {bad_value}, -2.0]))\n"
             "s, z = o.calculate_qparams()\nassert s.isfinite().all(), f'WRONG: {s}'"),
        Case("quant", ("MinMaxObserver",),
             q + f"Q.MinMaxObserver(quant_min={rng.choice([5, 300, -5])}, "
             f"quant_max={rng.choice([100, 1000])})"),
        Case("quant", ("HistogramObserver",),
             q + f"Q.HistogramObserver(bins={rng.choice([0, -1, -100])})"),
        Case("quant", ("PerChannelMinMaxObserver",),
             q + f"o = Q.PerChannelMinMaxObserver(ch_axis={rng.choice([2, 3, 7])})\n"
             "o(T.ones(2, 3))\no.calculate_qparams()"),
        Case("quant", ("quantize_per_tensor",),
             "import wick.nn.quantized as nnq\n"
             f"nnq.quantize_per_tensor(T.ones(3), {rng.choice(['0.1', bad_scale])}, "
             f"{rng.choice([300, -1, 256])})"),
    ])


def _sequence(rng):
    layer = rng.choice(["RNN", "LSTM", "GRU"])
    f, h, wrong = rng.randint(2, 6), rng.randint(2, 6), rng.randint(7, 12)
    steps, batch = rng.randint(1, 4), rng.randint(1, 4)
    lengths = sorted((rng.randint(1, steps) for _ in range(batch)), reverse=True)
    bad_lengths = rng.choice([lengths[::-1] if len(set(lengths)) > 1 else [steps + 1] + lengths[1:],
                              [steps + rng.randint(1, 5)] + lengths[1:], lengths[:-1] + [0],
                              lengths + [1]])
    e, heads = rng.choice([(10, 3), (9, 2), (7, 4), (12, 5)])
    return rng.choice([
        Case("sequence", (layer,), f"nn.{layer}({f}, {h})(T.ones({steps}, {batch}, {wrong}))"),
        Case("sequence", (layer,),
             f"nn.{layer}({f}, {h})(T.ones({steps}, {batch}, {f}), "
             + ("(T.zeros(1, {0}, {1}), T.zeros(1, {0}, {1})))" if layer == "LSTM" else "T.zeros(1, {0}, {1}))")
             .format(batch + rng.randint(1, 3), h)),
        Case("sequence", (layer, "hidden_size"), f"nn.{layer}({f}, {rng.choice([0, -h])})"),
        Case("sequence", (layer, "num_layers"), f"nn.{layer}({f}, {h}, num_layers={rng.choice([0, -1])})"),
        Case("sequence", ("dropout",), f"nn.{layer}({f}, {h}, dropout={rng.choice([1.5, -0.5, 2.0])})"),
        Case("sequence", ("pack_padded_sequence",),
             f"nn.utils.rnn.pack_padded_sequence(T.ones({steps}, {batch}, 2), {bad_lengths})"),
        Case("sequence", ("embed_dim", "divisible"), f"nn.MultiheadAttention({e}, {heads})"),
        Case("sequence", ("attn_mask",),
             f"m = nn.MultiheadAttention(8, 2)\nq = T.ones({steps}, {batch}, 8)\n"
             f"m(q, q, q, attn_mask=T.zeros({steps + rng.randint(1, 3)}, {steps}))"),
        Case("sequence", ("Transformer",),
             "m = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, "
             f"dim_feedforward=16)\nm(T.ones({steps}, {batch}, 8), T.ones({steps}, {batch + 1}, 8))"),
        Case("sequence", ("generate_square_subsequent_mask",),
             f"nn.Transformer.generate_square_subsequent_mask({-rng.randint(1, 50)})"),
    ])


def _optim(rng):
    name = rng.choice(["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
    option = rng.choice(["lr", "eps", "weight_decay"])
    value = rng.choice(["-1", "-1e-3", "float('nan')", "-float('inf')"])
    state = {"RMSprop": "square_avg", "Adagrad": "sum", "Adadelta": "acc_delta",
             "Adamax": "exp_inf", "NAdam": "mu_product", "RAdam": "exp_avg"}[name]
    setup = f"p = [nn.Parameter(T.ones(3))]\no = optim.{name}(p)\np[0].grad = T.ones(3)\no.step()\n"
    sgd = "optim.SGD([nn.Parameter(T.ones(3))], lr=0.1, momentum=0.9)"
    returned = rng.choice(["None", "'x'", "float('nan')", "float('inf')"])
    scheduler, target, argument = rng.choice([("StepLR", "'sgd'", 1), ("ExponentialLR", "[1, 2]", 0.9),
                                              ("MultiStepLR", "None", [1])])
    return rng.choice([
        Case("optim", (name,), f"optim.{name}([nn.Parameter(T.ones(3))], {option}={value})"),
        Case("optim", (name,), setup + f"p[0].data = T.ones({rng.randint(4, 9)})\n"
             f"p[0].grad = T.ones(p[0].shape[0])\no.step()"),
        Case("optim", (name,), setup + f"sd = o.state_dict()\ndel sd['state'][0]['{state}']\n"
             "o.load_state_dict(sd)\np[0].grad = T.ones(3)\no.step()"),
        Case("optim", ("ReduceLROnPlateau",),
             f"optim.lr_scheduler.ReduceLROnPlateau({sgd}, factor={rng.choice([1.0, 1.5, 10])})"),
        Case("optim", ("OneCycleLR",),
             f"optim.lr_scheduler.OneCycleLR({sgd}, 1.0, total_steps={rng.choice([0, -3, 2.5])})"),
        Case("optim", ("LambdaLR",),
             f"s = optim.lr_scheduler.LambdaLR({sgd}, lambda e: {returned} if e else 1.0)\n"
             "s.optimizer.step(); s.step()\n"
             "lr = s.get_last_lr()[0]\nassert lr == lr and abs(lr) != float('inf'), f'WRONG: {lr}'"),
        Case("optim", ("CosineAnnealingWarmRestarts",),
             f"optim.lr_scheduler.CosineAnnealingWarmRestarts({sgd}, {rng.choice([0, -1, 1.5])})"),
        Case("optim", ("CyclicLR",),
             f"optim.lr_scheduler.CyclicLR({sgd}, 0.01, 0.1, step_size_up={rng.choice([0, -2])})"),
        Case("optim", (scheduler,), f"optim.lr_scheduler.{scheduler}({target}, {argument})"),
    ])


def generate(seed, per_class, tmp):
    rng = random.Random(seed)
    makers = [_overflow, _index, _overlap, _mismatch, _state, _loader, _threads,
              lambda r: _file(r, tmp), _compile, _quantization, _sequence, _optim]
    cases, seen = [], set()
    for make in makers:
        tries = 0
        while sum(1 for c in cases if c.cls == make(random.Random(0)).cls) < per_class and tries < 20 * per_class:
            tries += 1
            case = make(rng)
            if case.code not in seen:
                seen.add(case.code)
                cases.append(case)
    return cases


CHILD = r"""
import json, sys
lib = sys.argv[1]
if lib == "wick":
    import wick as T, wick.nn as nn, wick.nn.functional as F, wick.optim as optim
    import wick.utils.data, wick.quantization
else:
    import torch as T, torch.nn as nn, torch.nn.functional as F, torch.optim as optim
    import torch.utils.data
codes = json.load(open(sys.argv[2]))
for i in range(int(sys.argv[3]), len(codes)):
    print(json.dumps({"start": i}), flush=True)
    try:
        exec(codes[i], {"T": T, "nn": nn, "F": F, "optim": optim, "WICK": lib == "wick"})
        out = {"i": i, "raised": None, "message": ""}
    except BaseException as e:  # the probe records every outcome, KeyboardInterrupt included
        out = {"i": i, "raised": type(e).__name__, "message": str(e)[:400]}
    print(json.dumps(out), flush=True)
"""


def run_all(lib, cases, env):
    """Outcome dicts per case, restarting the child after a crash or a hang."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([c.code for c in cases], f)
        codes = f.name
    results, start = {}, 0
    while start < len(cases):
        proc = subprocess.Popen([sys.executable, "-c", CHILD, lib, codes, str(start)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put("")],
                                  daemon=True)
        reader.start()
        current = None
        try:
            while True:
                limit = cases[current].timeout if current is not None else 60
                try:
                    line = lines.get(timeout=limit)
                except queue.Empty:
                    results[current] = {"hang": True}
                    break
                if not line:
                    proc.wait()
                    if current is not None and current not in results:
                        results[current] = {"crash": proc.returncode}
                    break
                msg = json.loads(line)
                if "start" in msg:
                    current = msg["start"]
                else:
                    results[msg["i"]] = msg
        finally:
            proc.kill()
            proc.wait()
        start = (current + 1) if current is not None else len(cases)
        if current is None:
            break
    os.unlink(codes)
    return results


def classify(case, wick_out, torch_out):
    if "crash" in wick_out:
        return "crash"
    if "hang" in wick_out:
        return "hang"
    raised, message = wick_out.get("raised"), wick_out.get("message", "")
    if raised == "AssertionError" and message.startswith("WRONG"):
        return "silent"
    if case.expect == "ok":
        return "ok" if raised is None else "unclear"
    if raised is None:
        return "silent" if (torch_out is None or torch_out.get("raised")) else "both-accept"
    if not message.strip() or not any(n.lower() in message.lower() for n in case.names):
        return "unclear"
    return "clear"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-class", type=int, default=30)
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparison run")
    ap.add_argument("--show", choices=["unclear", "silent", "all"], help="print these cases")
    args = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    build = os.environ.get("WICK_BUILD_DIR", os.path.join(root, "build"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(root, "python"), os.path.join(os.path.abspath(build), "python")]))
    with tempfile.TemporaryDirectory() as tmp:
        cases = generate(args.seed, args.per_class, tmp)
        wick_res = run_all("wick", cases, env)
        torch_res = None
        if not args.no_torch:
            try:
                import torch  # noqa: F401
                torch_res = run_all("torch", cases, env)
            except ImportError:
                pass
    table = {}
    for i, case in enumerate(cases):
        out = classify(case, wick_res.get(i, {"hang": True}), torch_res.get(i) if torch_res else None)
        table.setdefault(case.cls, Counter())[out] += 1
        if args.show and (args.show == "all" or out == args.show):
            print(f"--- {case.cls}/{out}: {case.code!r}\n    wick: {wick_res.get(i)}"
                  + (f"\n    torch: {torch_res.get(i)}" if torch_res else ""))
    kinds = ["clear", "unclear", "silent", "crash", "hang", "ok", "both-accept"]
    print(f"{'class':<10}" + "".join(f"{k:>12}" for k in kinds))
    total = Counter()
    for cls, counts in table.items():
        total.update(counts)
        print(f"{cls:<10}" + "".join(f"{counts[k]:>12}" for k in kinds))
    print(f"{'total':<10}" + "".join(f"{total[k]:>12}" for k in kinds))
    errors = total["clear"] + total["unclear"]
    share = 100.0 * total["unclear"] / errors if errors else 0.0
    print(f"{len(cases)} cases (seed {args.seed}); unclear errors {share:.1f}% of {errors}")
    return 1 if total["crash"] or total["hang"] or total["silent"] else 0


if __name__ == "__main__":
    sys.exit(main())
