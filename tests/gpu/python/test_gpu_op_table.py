"""Every op of the op table, and the sequence layers, attention and optimizers built on them, on
the GPU against wick's own CPU results: the same float64 inputs on both devices, the outputs and
the gradients of every input compared. The samples are tests/python/test_op_table.py's, so an op
added to the table is run on the GPU without a line here. PyTorch is not needed (the CPU side is
checked against it by the CPU suite). Skipped without a GPU."""

import os
import sys

import numpy as np
import pytest

import wick

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import test_op_table as table  # noqa: E402

pytestmark = pytest.mark.skipif(not wick.cuda.is_available(), reason="needs a CUDA device")

# float64 on both devices: only the order of additions differs (reductions, GEMMs, scans).
RTOL, ATOL = 1e-9, 1e-10


class OnDevice:
    """wick, with the factories that a sample calls (tensor, full, arange, ones, zeros) making
    their tensors on one device, so an index or a mask built inside a sample sits beside the
    inputs."""

    def __init__(self, device):
        self.device = device

    def __getattr__(self, name):
        attr = getattr(wick, name)
        if name in ("tensor", "full", "arange", "ones", "zeros"):
            return lambda *args, **kwargs: attr(*args, device=self.device, **kwargs)
        return attr


def flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out] if isinstance(out, wick.Tensor) else []


def sample(name):
    """(fn(m, *inputs), float64 CPU inputs) for op `name`, from test_op_table's tables."""
    kind = table.sample_kind(name)
    if kind == "unary":
        call, make = table.unary_sample(name)
        return call, [wick.tensor(make(3, 4, seed=2), requires_grad=True)]
    if kind == "binary":
        call = table.BINARY_CALL.get(name, lambda m, a, b: getattr(m, name)(a, b))
        return call, [wick.tensor(table.positive(3, 4, seed=s), requires_grad=True)
                      for s in (0, 1)]
    fn, specs, requires_grad = table.KERNEL_SAMPLES[name]
    rng = np.random.default_rng(5)
    return fn, [wick.tensor(rng.standard_normal(s), requires_grad=rg is not False)
                for s, rg in zip(specs, requires_grad or [True] * len(specs))]


def compare_on_devices(fn, inputs, grad=True, rtol=RTOL, atol=ATOL):
    """fn(m, *inputs) on the CPU and on the GPU (inputs copied there, m making its tensors
    there): the outputs, then the gradients of every input that requires grad under one random
    weighting of the outputs."""
    results = []
    for device in ("cpu", "cuda"):
        xs = [x.detach().to(device).requires_grad_(x.requires_grad) for x in inputs]
        outs = flat(fn(OnDevice(device), *xs))
        grads = []
        weighted = [o for o in outs if o.is_floating_point() and o.requires_grad]
        if grad and weighted:
            rng = np.random.default_rng(7)
            sum((o.double() * wick.tensor(rng.standard_normal(tuple(o.shape)), device=device))
                .sum() for o in weighted).backward()
            grads = [x.grad for x in xs if x.requires_grad]
        results.append((outs, grads))
    (cpu_outs, cpu_grads), (gpu_outs, gpu_grads) = results
    assert len(cpu_outs) == len(gpu_outs) and len(cpu_grads) == len(gpu_grads)
    for c, g in zip(cpu_outs + cpu_grads, gpu_outs + gpu_grads):
        assert g.device.type == "cuda" and c.dtype == g.dtype and c.shape == g.shape
        np.testing.assert_allclose(g.detach().cpu().numpy(), c.detach().numpy(), rtol=rtol,
                                   atol=atol)


SAMPLED = sorted(n for n in table.OPS if table.sample_kind(n) in ("unary", "binary", "kernel"))


@pytest.mark.parametrize("name", SAMPLED)
def test_op_on_the_gpu_matches_the_cpu(name):
    fn, inputs = sample(name)
    compare_on_devices(fn, inputs, grad=table.OPS[name]["differentiable"])


@pytest.mark.parametrize("name", SAMPLED)
def test_op_on_strided_float32_gpu_inputs_matches_the_cpu(name):
    """The same samples in float32 through non-contiguous views (a transposed copy's .t())."""
    fn, inputs = sample(name)
    views = [x.detach().float().t().contiguous().t() if x.dim() == 2 else x.detach().float()
             for x in inputs]
    compare_on_devices(fn, views, grad=False, rtol=1e-5, atol=1e-5)


def double(module):
    return module.double()


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_recurrent_layers_on_the_gpu_match_the_cpu(kind, batch_first):
    wick.manual_seed(0)
    layer = double(getattr(wick.nn, kind)(5, 7, num_layers=2, bidirectional=True,
                                          batch_first=batch_first))
    x = wick.randn(3, 6, 5, dtype=wick.float64, requires_grad=True)

    def run(m, x):
        model = layer.to(x.device.type)
        out, _ = model(x)
        lengths = [6, 4, 2] if batch_first else [3, 3, 2, 2, 1, 1]
        packed = wick.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first)
        packed_out, _ = model(packed)
        return out, packed_out.data

    compare_on_devices(run, [x])


def test_attention_and_the_transformer_on_the_gpu_match_the_cpu():
    wick.manual_seed(1)
    mha = double(wick.nn.MultiheadAttention(8, 2, batch_first=True))
    transformer = double(wick.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0))
    causal = wick.nn.Transformer.generate_square_subsequent_mask(4).double()

    def run(m, q, k, src, tgt):
        device = q.device.type
        out, weights = mha.to(device)(q, k, k, need_weights=True)
        y = transformer.to(device)(src, tgt, tgt_mask=causal.to(device))
        return out, weights, y

    inputs = [wick.randn(2, 5, 8, dtype=wick.float64, requires_grad=True),
              wick.randn(2, 7, 8, dtype=wick.float64, requires_grad=True),
              wick.randn(6, 2, 8, dtype=wick.float64, requires_grad=True),
              wick.randn(4, 2, 8, dtype=wick.float64, requires_grad=True)]
    compare_on_devices(run, inputs)


def test_long_causal_attention_spans_several_gpu_tiles():
    """300 queries and keys: several tiles, a partial one at the end, causal tiles skipped."""
    wick.manual_seed(2)
    qkv = [wick.randn(2, 3, 300, 16, dtype=wick.float64, requires_grad=True) for _ in range(3)]
    compare_on_devices(
        lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
        qkv)


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                                  "AdamW", "SGD"])
def test_optimizer_steps_on_the_gpu_match_the_cpu(name):
    kwargs = {"SGD": {"lr": 0.1, "momentum": 0.9, "nesterov": True}}.get(name, {})
    rng = np.random.default_rng(3)
    start, grads = rng.standard_normal((4, 5)), [rng.standard_normal((4, 5)) for _ in range(4)]
    final = {}
    for device in ("cpu", "cuda"):
        p = wick.nn.Parameter(wick.tensor(start, device=device))
        opt = getattr(wick.optim, name)([p], **kwargs)
        for g in grads:
            p.grad = wick.tensor(g, device=device)
            opt.step()
        final[device] = p.detach().cpu().numpy()
    np.testing.assert_allclose(final["cuda"], final["cpu"], rtol=1e-12, atol=1e-12)
