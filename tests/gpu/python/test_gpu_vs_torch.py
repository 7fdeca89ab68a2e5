"""wick's CUDA results against PyTorch's CUDA results on the same device: ops, layers (with cuDNN
on and off), losses, optimizer steps, autocast dtypes and the caching allocator's statistics.

Run by tests/gpu/run.sh on a GPU machine; skipped, saying why, where wick or PyTorch has no GPU
(CI, and Debian's python3-torch, which is built without CUDA)."""

import numpy as np
import pytest

import wick

torch = pytest.importorskip("torch")

_why = None
if not wick.cuda.is_available():
    _why = "needs a CUDA device for wick"
elif not torch.cuda.is_available():
    _why = "needs PyTorch with CUDA (torch %s has none)" % torch.__version__
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")

DTYPES = {"float32": (wick.float32, "float32"), "float64": (wick.float64, "float64"),
          "float16": (wick.float16, "float16"), "bfloat16": (wick.bfloat16, "bfloat16")}
# Tolerances by dtype: (rtol, atol).
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12), "float16": (2e-3, 2e-3),
       "bfloat16": (2e-2, 2e-2)}


def pair(array, dtype="float32", requires_grad=False):
    """The same values as a wick and a torch CUDA tensor of `dtype`."""
    w = wick.from_numpy(np.ascontiguousarray(array)).to("cuda").to(DTYPES[dtype][0])
    t = torch.from_numpy(np.ascontiguousarray(array)).to("cuda").to(getattr(torch, DTYPES[dtype][1]))
    if requires_grad:
        w.requires_grad_(True)
        t.requires_grad_(True)
    return w, t


def to_np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().float().cpu().numpy() if x.dtype == torch.bfloat16 else x.detach().cpu().numpy()
    x = x.detach()
    return x.float().cpu().numpy() if x.dtype == wick.bfloat16 else x.cpu().numpy()


def close(w, t, dtype="float32", scale=1.0):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(to_np(w).astype(np.float64), to_np(t).astype(np.float64),
                               rtol=rtol * scale, atol=atol * scale)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.fixture(params=[True, False], ids=["cudnn", "handwritten"])
def cudnn(request):
    """Runs a test with wick.backends.cudnn.enabled on and off (torch keeps its default)."""
    before = wick.backends.cudnn.enabled
    wick.backends.cudnn.enabled = request.param
    yield request.param
    wick.backends.cudnn.enabled = before


@pytest.fixture(autouse=True)
def exact_float32():
    """TF32 off on both sides, so float32 results compare at float32 tolerance."""
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             wick.backends.cuda.matmul.allow_tf32, wick.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    wick.backends.cuda.matmul.allow_tf32 = wick.backends.cudnn.allow_tf32 = False
    yield
    (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
     wick.backends.cuda.matmul.allow_tf32, wick.backends.cudnn.allow_tf32) = saved


# ---- ops -------------------------------------------------------------------------------------------

UNARY = {
    "exp": lambda x: x.exp(), "tanh": lambda x: x.tanh(), "sigmoid": lambda x: x.sigmoid(),
    "relu": lambda x: x.relu(), "abs": lambda x: x.abs(), "neg": lambda x: -x,
    "log1p_abs": lambda x: (x.abs() + 1).log(), "sqrt_abs": lambda x: x.abs().sqrt(),
    "sum": lambda x: x.sum(), "sum_dim0": lambda x: x.sum(0), "sum_dim1": lambda x: x.sum(1),
    "mean_dim1": lambda x: x.mean(1), "max_dim1": lambda x: x.max(1)[0],
    "argmax_dim0": lambda x: x.argmax(0), "transpose_contig": lambda x: x.t().contiguous(),
    "slice_mul": lambda x: x[:, 1::3] * 2,
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_and_reductions_match_torch(name, dtype):
    w, t = pair(randn(67, 129), dtype)
    scale = 30.0 if name.startswith(("sum", "mean")) else 1.0
    close(UNARY[name](w), UNARY[name](t), dtype, scale)


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 1), "maximum": lambda a, b: a.maximum(b),
    "broadcast_row": lambda a, b: a + b[:1], "broadcast_col": lambda a, b: a * b[:, :1],
    "where": lambda a, b: (a > b).float() * a,
}


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_match_torch(name, dtype):
    (wa, ta), (wb, tb) = pair(randn(33, 65, seed=1), dtype), pair(randn(33, 65, seed=2), dtype)
    if name == "where" and dtype != "float32":
        pytest.skip("float() of a bool mask is float32")
    close(BINARY[name](wa, wb), BINARY[name](ta, tb), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_matmul_matches_torch(dtype):
    (wa, ta), (wb, tb) = pair(randn(96, 200, seed=3), dtype), pair(randn(200, 72, seed=4), dtype)
    close(wa @ wb, ta @ tb, dtype, scale=20.0)


# ---- layers, cuDNN on and off ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("dim,size", [(1, 10), (1, 5000), (0, 7), (2, 33)])
def test_softmax_and_log_softmax_match_torch(cudnn, dtype, dim, size):
    shape = [4, 6, 5]
    shape[dim] = size
    w, t = pair(randn(*shape, seed=5), dtype)
    close(wick.nn.functional.softmax(w, dim), torch.softmax(t, dim), dtype)
    close(wick.nn.functional.log_softmax(w, dim), torch.log_softmax(t, dim), dtype, scale=5.0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kernel,stride,padding,include_pad", [(2, 2, 0, True), (3, 1, 1, True),
                                                              (3, 2, 1, False)])
def test_avg_pool2d_forward_and_backward_match_torch(cudnn, dtype, kernel, stride, padding,
                                                     include_pad):
    w, t = pair(randn(2, 3, 9, 11, seed=6), dtype, requires_grad=True)
    yw = wick.nn.functional.avg_pool2d(w, kernel, stride, padding, count_include_pad=include_pad)
    yt = torch.nn.functional.avg_pool2d(t, kernel, stride, padding, count_include_pad=include_pad)
    close(yw, yt, dtype)
    gw, gt = pair(randn(*yt.shape, seed=7), dtype)
    yw.backward(gw)
    yt.backward(gt)
    close(w.grad, t.grad, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_max_pool2d_forward_and_backward_match_torch(dtype):
    w, t = pair(randn(2, 3, 10, 10, seed=8), dtype, requires_grad=True)
    yw = wick.nn.functional.max_pool2d(w, 3, 2, 1)
    yt = torch.nn.functional.max_pool2d(t, 3, 2, 1)
    close(yw, yt, dtype)
    yw.sum().backward()
    yt.sum().backward()
    close(w.grad, t.grad, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(8, 4, 5, 5), (16, 6)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_forward_backward_and_running_stats_match_torch(cudnn, dtype, shape, training):
    w, t = pair(randn(*shape, seed=9) * 3 + 1, dtype, requires_grad=True)
    c = shape[1]
    (wrm, trm), (wrv, trv) = pair(np.zeros(c, np.float32), dtype), pair(np.ones(c, np.float32), dtype)
    (ww, tw) = pair(randn(c, seed=10), dtype, requires_grad=True)
    (wb, tb) = pair(randn(c, seed=11), dtype, requires_grad=True)
    yw = wick.nn.functional.batch_norm(w, wrm, wrv, ww, wb, training, 0.1, 1e-5)
    yt = torch.nn.functional.batch_norm(t, trm, trv, tw, tb, training, 0.1, 1e-5)
    close(yw, yt, dtype, scale=10)
    close(wrm, trm, dtype)
    close(wrv, trv, dtype)
    gw, gt = pair(randn(*shape, seed=12), dtype)
    yw.backward(gw)
    yt.backward(gt)
    for a, b in [(w.grad, t.grad), (ww.grad, tw.grad), (wb.grad, tb.grad)]:
        close(a, b, dtype, scale=100)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("contiguous", [True, False])
def test_conv2d_forward_and_backward_match_torch(dtype, contiguous):
    x = randn(2, 5, 4, 12, seed=13)
    if not contiguous:  # a transposed view: non-contiguous input
        x = np.ascontiguousarray(x.transpose(0, 1, 3, 2))
    w, t = pair(x, dtype, requires_grad=True)
    if not contiguous:
        w, t = w.transpose(2, 3), t.transpose(2, 3)
        w.retain_grad()
        t.retain_grad()
    (wk, tk) = pair(randn(7, 5, 3, 3, seed=14) * 0.2, dtype, requires_grad=True)
    (wb, tb) = pair(randn(7, seed=15), dtype, requires_grad=True)
    yw = wick.nn.functional.conv2d(w, wk, wb, 1, 1)
    yt = torch.nn.functional.conv2d(t, tk, tb, 1, 1)
    close(yw, yt, dtype, scale=20)
    gw, gt = pair(randn(*yt.shape, seed=16), dtype)
    yw.backward(gw)
    yt.backward(gt)
    for a, b in [(w.grad, t.grad), (wk.grad, tk.grad), (wb.grad, tb.grad)]:
        close(a, b, dtype, scale=50)


# ---- losses --------------------------------------------------------------------------------------

LOSSES = {
    "cross_entropy": lambda F, x, y, p: F.cross_entropy(x, y),
    "cross_entropy_smoothing": lambda F, x, y, p: F.cross_entropy(x, y, label_smoothing=0.1),
    "nll": lambda F, x, y, p: F.nll_loss(F.log_softmax(x, 1), y),
    "mse": lambda F, x, y, p: F.mse_loss(x, p),
    "l1": lambda F, x, y, p: F.l1_loss(x, p),
    "bce_with_logits": lambda F, x, y, p: F.binary_cross_entropy_with_logits(x, p.sigmoid()),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_and_their_gradients_match_torch(name):
    w, t = pair(randn(32, 10, seed=17), requires_grad=True)
    labels = np.random.default_rng(18).integers(0, 10, 32)
    wy, ty = wick.from_numpy(labels).to("cuda"), torch.from_numpy(labels).to("cuda")
    wp, tp = pair(randn(32, 10, seed=19))
    lw = LOSSES[name](wick.nn.functional, w, wy, wp)
    lt = LOSSES[name](torch.nn.functional, t, ty, tp)
    close(lw, lt)
    lw.backward()
    lt.backward()
    close(w.grad, t.grad)


# ---- optimizer steps -----------------------------------------------------------------------------

OPTIMIZERS = {
    "sgd_momentum": lambda m, p: m.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-4),
    "sgd_nesterov": lambda m, p: m.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "adam": lambda m, p: m.optim.Adam(p, lr=1e-2),
    "adamw": lambda m, p: m.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
}


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_torch(name, dtype):
    w, t = pair(randn(40, 30, seed=20), dtype, requires_grad=True)
    ow, ot = OPTIMIZERS[name](wick, [w]), OPTIMIZERS[name](torch, [t])
    for step in range(5):
        gw, gt = pair(randn(40, 30, seed=21 + step), dtype)
        w.grad, t.grad = gw, gt
        ow.step()
        ot.step()
    close(w, t, dtype, scale=5)


# ---- autocast ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_autocast_picks_the_dtypes_torch_picks(dtype):
    (wa, ta), (wb, tb) = pair(randn(16, 32, seed=30)), pair(randn(32, 8, seed=31))
    (wk, tk) = pair(randn(4, 3, 3, 3, seed=32))
    (wx, tx) = pair(randn(2, 3, 8, 8, seed=33))
    wd, td = DTYPES[dtype]
    with wick.autocast("cuda", dtype=wd):
        w_out = {"matmul": wa @ wb, "linear": wick.nn.functional.linear(wa, wb.t()),
                 "conv2d": wick.nn.functional.conv2d(wx, wk), "softmax":
                 wick.nn.functional.softmax(wa @ wb, 1), "sum": (wa @ wb).sum(),
                 "add_fp32": wa + wa}
    with torch.autocast("cuda", dtype=getattr(torch, td)):
        t_out = {"matmul": ta @ tb, "linear": torch.nn.functional.linear(ta, tb.t()),
                 "conv2d": torch.nn.functional.conv2d(tx, tk), "softmax":
                 torch.softmax(ta @ tb, 1), "sum": (ta @ tb).sum(), "add_fp32": ta + ta}
    for op in w_out:
        assert str(w_out[op].dtype).split(".")[-1] == str(t_out[op].dtype).split(".")[-1], op
        close(w_out[op], t_out[op], dtype, scale=20)


# ---- the caching allocator -----------------------------------------------------------------------

def _stats(lib):
    s = lib.cuda.memory_stats()
    return {k: s.get(k, 0) for k in ("allocated_bytes.all.current", "reserved_bytes.all.current",
                                      "active_bytes.all.current", "segment.all.current",
                                      "allocation.all.current")}


def test_the_caching_allocator_keeps_torchs_statistics_for_the_same_allocation_sequence():
    # Sizes across the small (<= 1 MiB) and large pools, a split and a free in the middle.
    sizes = [1, 100, 512, 513, 4096, 1 << 20, (1 << 20) + 1, 3 << 20, 11 << 20, 25 << 20]
    results = {}
    for lib in (wick, torch):
        lib.cuda.synchronize()
        lib.cuda.empty_cache()
        before = _stats(lib)
        held = [lib.empty(n, dtype=lib.uint8, device="cuda") for n in sizes]
        del held[3], held[5]
        after = _stats(lib)
        results[lib.__name__] = {k: after[k] - before[k] for k in after}
        del held
        lib.cuda.empty_cache()
    assert results["wick"] == results["torch"]


def test_peak_statistics_after_a_reset_match_torch():
    results = {}
    for lib in (wick, torch):
        lib.cuda.empty_cache()
        lib.cuda.reset_peak_memory_stats()
        base = lib.cuda.memory_allocated()
        a = lib.empty(3 << 20, dtype=lib.uint8, device="cuda")
        b = lib.empty(5 << 20, dtype=lib.uint8, device="cuda")
        del a
        c = lib.empty(1 << 20, dtype=lib.uint8, device="cuda")
        results[lib.__name__] = (lib.cuda.max_memory_allocated() - base,
                                 lib.cuda.memory_allocated() - base)
        del b, c
    assert results["wick"] == results["torch"]
