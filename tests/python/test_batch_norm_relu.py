"""Batch norm's fused epilogue, relu(batch_norm(x) + residual) in one kernel each way (Note [batch
norm's fused epilogue] in core/kernels.h): F.batch_norm_relu and BatchNorm2d.forward_relu against
PyTorch 1.13's three separate ops, gradcheck in float64, the ResNets that use it in training, and
its bad inputs."""

import numpy as np
import pytest

import wick
import wick.models
import wick.models.resnet as resnet
import wick.nn.functional as F

torch = pytest.importorskip("torch")


def close(got, want, tol):
    got = got.detach().numpy() if hasattr(got, "detach") else np.asarray(got)
    want = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (16, 5), (3, 2, 7)])
def test_training_matches_torch(dtype, tol, residual, affine, shape):
    rng = np.random.default_rng(len(shape) * 4 + 2 * residual + affine)
    x, r, dz = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    w, b = (rng.standard_normal(shape[1]).astype(dtype) for _ in range(2))
    leaves = [x, r] + ([w, b] if affine else [])
    tt = [torch.tensor(a, requires_grad=True) for a in leaves]
    wt = [wick.tensor(a, requires_grad=True) for a in leaves]
    stats_t = [torch.zeros(shape[1], dtype=tt[0].dtype), torch.ones(shape[1], dtype=tt[0].dtype)]
    stats_w = [wick.zeros(shape[1], dtype=wt[0].dtype), wick.ones(shape[1], dtype=wt[0].dtype)]
    wb_t = tt[2:] if affine else [None, None]
    wb_w = wt[2:] if affine else [None, None]
    want = torch.nn.functional.batch_norm(tt[0], *stats_t, *wb_t, True, 0.1, 1e-5)
    want = torch.relu(want + tt[1] if residual else want)
    got = F.batch_norm_relu(wt[0], *stats_w, *wb_w, True, 0.1, 1e-5,
                            wt[1] if residual else None)
    assert got.grad_fn is not None and got.dtype == wt[0].dtype
    close(got, want, tol)
    want.backward(torch.tensor(dz))
    got.backward(wick.tensor(dz))
    for mine, theirs in zip(wt, tt):
        if theirs.grad is None:  # the residual, when it is not used
            assert mine.grad is None
            continue
        close(mine.grad, theirs.grad, tol)
    for mine, theirs in zip(stats_w, stats_t):
        close(mine, theirs, tol)


def test_strided_inputs_and_evaluation_match_torch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4, 5, 8)).astype(np.float32)
    r = rng.standard_normal((6, 4, 5, 8)).astype(np.float32)
    mean, var = rng.standard_normal(4).astype(np.float32), rng.random(4).astype(np.float32) + .5
    w, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    args_t = [torch.tensor(a) for a in (mean, var, w, b)]
    args_w = [wick.tensor(a) for a in (mean, var, w, b)]
    # Non-contiguous input and residual (a transposed view), in evaluation with and without
    # autograd (the differentiable affine ops), and in training.
    for training in (False, True):
        for grad in (False, True):
            xt = torch.tensor(x).transpose(2, 3).requires_grad_(grad)
            xw = wick.tensor(x).transpose(2, 3).requires_grad_(grad)
            rt, rw = torch.tensor(r).transpose(2, 3), wick.tensor(r).transpose(2, 3)
            want = torch.relu(torch.nn.functional.batch_norm(
                xt, *[a.clone() for a in args_t[:2]], *args_t[2:], training, 0.1, 1e-5) + rt)
            got = F.batch_norm_relu(xw, *[a.clone() for a in args_w[:2]], *args_w[2:], training,
                                    0.1, 1e-5, rw)
            close(got, want, 2e-5)
            if grad:
                want.sum().backward()
                got.sum().backward()
                close(xw.grad, xt.grad, 2e-5)


def test_gradcheck_and_gradgradcheck_float64():
    rng = np.random.default_rng(2)
    x, r = (wick.tensor(rng.standard_normal((3, 2, 4, 4)), requires_grad=True) for _ in range(2))
    w, b = (wick.tensor(rng.standard_normal(2), requires_grad=True) for _ in range(2))

    def f(x, w, b, r):
        return F.batch_norm_relu(x, None, None, w, b, True, 0.1, 1e-5, r)

    assert wick.autograd.gradcheck(f, (x, w, b, r))
    assert wick.autograd.gradgradcheck(f, (x, w, b, r))
    assert wick.autograd.gradcheck(lambda x: F.batch_norm_relu(x, None, None, training=True), (x,))


def test_relu_mask_zeroes_non_finite_gradients_as_torch_does():
    x = torch.tensor([[-1.0, 2.0], [3.0, -4.0], [0.5, 0.25]], requires_grad=True)
    dz = torch.tensor([[float("nan"), 1.0], [float("inf"), float("nan")], [2.0, 3.0]])
    torch.relu(torch.nn.functional.batch_norm(x, None, None, training=True)).backward(dz)
    xw = wick.tensor(x.detach().numpy(), requires_grad=True)
    F.batch_norm_relu(xw, None, None, training=True).backward(wick.tensor(dz.numpy()))
    mine, theirs = xw.grad.numpy(), x.grad.numpy()
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs))


def test_module_forward_relu_updates_running_stats_as_forward_does():
    wick.manual_seed(0)
    fused, plain = wick.nn.BatchNorm2d(3, momentum=None), wick.nn.BatchNorm2d(3, momentum=None)
    x, r = wick.randn(4, 3, 5, 5), wick.randn(4, 3, 5, 5)
    for _ in range(3):
        got = fused.forward_relu(x, r)
        want = wick.relu(plain(x) + r)
    close(got, want, 1e-6)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        close(getattr(fused, name), getattr(plain, name), 1e-6)


@pytest.mark.parametrize("model", ["resnet20", "resnet18"])
def test_resnet_training_step_equals_the_unfused_modules(model, monkeypatch):
    """The ResNets call bn_relu in training; the same step through the separate modules gives the
    same loss and gradients."""
    def unfused(bn, relu, x, residual=None):
        out = bn(x)
        return relu(out if residual is None else out + residual)

    size = 32 if model == "resnet20" else 64
    wick.manual_seed(0)
    x, y = wick.randn(4, 3, size, size), wick.randint(0, 10, (4,))
    results = []
    for helper in (resnet.bn_relu, unfused):
        monkeypatch.setattr(resnet, "bn_relu", helper)
        wick.manual_seed(1)
        net = getattr(wick.models, model)(num_classes=10)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        results.append((loss, [p.grad for p in net.parameters()], net.layer1[0].bn1.running_var))
    (loss_a, grads_a, var_a), (loss_b, grads_b, var_b) = results
    close(loss_a, loss_b, 1e-5)
    for a, b in zip(grads_a, grads_b):
        close(a, b, 1e-4)
    close(var_a, var_b, 1e-6)


def test_resnet_uses_the_fused_kernel_only_in_training():
    net = wick.models.resnet20()
    block = net.layer1[0]
    out = block(wick.randn(2, 16, 32, 32))
    assert out.grad_fn.name() == "BatchNormBackward"  # relu(bn2(...) + identity), fused
    net.eval()
    assert block(wick.randn(2, 16, 32, 32)).grad_fn.name() == "ReluBackward"


def test_bad_inputs_raise_the_errors_pytorch_would():
    x = wick.randn(4, 3, 5, 5)
    with pytest.raises(ValueError, match=r"batch_norm_relu.*residual must have the input's shape"):
        F.batch_norm_relu(x, None, None, training=True, residual=wick.randn(4, 3, 5, 4))
    with pytest.raises(TypeError, match=r"batch_norm_relu.*floating-point residual"):
        F.batch_norm_relu(x, None, None, training=True, residual=wick.zeros(4, 3, 5, 5,
                                                                            dtype=wick.int64))
    with pytest.raises(TypeError, match=r"batch_norm_relu.*floating-point input"):
        F.batch_norm_relu(wick.zeros(4, 3, dtype=wick.int64), None, None, training=True)
    with pytest.raises(ValueError, match=r"batch_norm_relu.*per-channel"):
        F.batch_norm_relu(x, None, None, wick.ones(4), training=True)
    with pytest.raises(ValueError, match=r"batch_norm_relu.*more than 1 value per channel"):
        F.batch_norm_relu(wick.randn(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match=r"batch_norm_relu.*running_mean and running_var"):
        F.batch_norm_relu(x, None, None, training=False)


def test_onnx_export_refuses_a_fused_batch_norm_with_a_clear_message(tmp_path):
    pytest.importorskip("onnx")
    import wick.onnx
    if not wick.onnx.available():
        pytest.skip("this build of wick has no ONNX exporter (libonnx-dev, libprotobuf-dev)")

    class Fused(wick.nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = wick.nn.BatchNorm2d(3)

        def forward(self, x):
            return self.bn.forward_relu(x)

    model = Fused().eval()
    with pytest.raises(Exception, match="fused residual or relu"):
        wick.onnx.export(model, wick.randn(1, 3, 4, 4), str(tmp_path / "m.onnx"))
