"""wick.nn against torch.nn: every layer (same weights, same input: same output and gradients),
wick.nn.functional, wick.nn.init, Module subclassing, state dicts and printing."""

import copy
from collections import OrderedDict

import numpy as np
import pytest

import wick
import wick.nn as nn
import wick.nn.functional as F
from reference import check, needs_torch, torch


def copy_params(src_torch, dst_wick):
    """Copies every parameter and buffer of a torch module into the wick twin (same names)."""
    theirs = src_torch.state_dict()
    with wick.no_grad():
        for name, t in dst_wick.state_dict(keep_vars=True).items():
            t.copy_(wick.tensor(theirs[name].numpy()))


def compare_layer(make, shape, train=True, atol=1e-5, input_dtype=np.float32, seed=0):
    """make(module) builds the layer in either framework; compares forward and all grads."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(input_dtype)
    tl, wl = make(torch.nn), make(nn)
    copy_params(tl, wl)
    tl.train(train)
    wl.train(train)
    tx = torch.tensor(x, requires_grad=x.dtype.kind == "f")
    wx = wick.tensor(x, requires_grad=x.dtype.kind == "f")
    ty, wy = tl(tx), wl(wx)
    np.testing.assert_allclose(wy.detach().numpy(), ty.detach().numpy(), atol=atol, rtol=1e-4)
    weights = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    (ty * torch.tensor(weights)).sum().backward()
    (wy * wick.tensor(weights)).sum().backward()
    if x.dtype.kind == "f":
        np.testing.assert_allclose(wx.grad.numpy(), tx.grad.numpy(), atol=atol * 10, rtol=1e-3)
    tparams = dict(tl.named_parameters())
    for name, p in wl.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), atol=atol * 10,
                                   rtol=1e-3, err_msg=name)
    for name, b in wl.named_buffers():
        np.testing.assert_allclose(b.numpy(), dict(tl.named_buffers())[name].numpy(), atol=atol,
                                   rtol=1e-4, err_msg=name)


LAYERS = {
    "linear": (lambda m: m.Linear(5, 3), (4, 5)),
    "linear_3d_nobias": (lambda m: m.Linear(5, 3, bias=False), (2, 4, 5)),
    "conv2d": (lambda m: m.Conv2d(3, 4, 3, stride=2, padding=1), (2, 3, 7, 7)),
    "conv2d_groups": (lambda m: m.Conv2d(4, 6, (3, 2), dilation=(1, 2), groups=2), (1, 4, 6, 7)),
    "maxpool": (lambda m: m.MaxPool2d(2), (2, 3, 6, 6)),
    "maxpool_pad": (lambda m: m.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (1, 2, 7, 7)),
    "avgpool": (lambda m: m.AvgPool2d(2, stride=1), (2, 3, 5, 5)),
    "adaptive_avgpool": (lambda m: m.AdaptiveAvgPool2d((2, 3)), (2, 3, 7, 8)),
    "batchnorm1d": (lambda m: m.BatchNorm1d(4), (8, 4)),
    "batchnorm1d_3d": (lambda m: m.BatchNorm1d(4, momentum=None), (3, 4, 5)),
    "batchnorm2d": (lambda m: m.BatchNorm2d(3), (4, 3, 5, 5)),
    "layernorm": (lambda m: m.LayerNorm(6), (3, 6)),
    "layernorm_2d": (lambda m: m.LayerNorm((4, 5)), (2, 4, 5)),
    "flatten": (lambda m: m.Flatten(), (2, 3, 4)),
    "relu": (lambda m: m.ReLU(), (3, 4)),
    "gelu": (lambda m: m.GELU(), (3, 4)),
    "gelu_tanh": (lambda m: m.GELU(approximate="tanh"), (3, 4)),
    "silu": (lambda m: m.SiLU(), (3, 4)),
    "tanh": (lambda m: m.Tanh(), (3, 4)),
    "sigmoid": (lambda m: m.Sigmoid(), (3, 4)),
    "softmax": (lambda m: m.Softmax(dim=1), (3, 4)),
    "log_softmax": (lambda m: m.LogSoftmax(dim=-1), (3, 4)),
    "leaky_relu": (lambda m: m.LeakyReLU(0.2), (3, 4)),
    "sequential": (lambda m: m.Sequential(m.Linear(4, 8), m.ReLU(), m.Linear(8, 2)), (5, 4)),
    "cnn": (lambda m: m.Sequential(m.Conv2d(1, 4, 3), m.BatchNorm2d(4), m.ReLU(),
                                   m.MaxPool2d(2), m.Flatten(), m.Linear(36, 3)), (2, 1, 8, 8)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(name):
    make, shape = LAYERS[name]
    compare_layer(make, shape, train=True)
    if "batchnorm" in name or name == "cnn":
        compare_layer(make, shape, train=False)


@needs_torch
def test_embedding_and_dropout():
    idx = np.array([[1, 3, 0], [2, 3, 4]])
    for pad in (None, 0):
        tl, wl = torch.nn.Embedding(5, 3, padding_idx=pad), nn.Embedding(5, 3, padding_idx=pad)
        copy_params(tl, wl)
        ty, wy = tl(torch.tensor(idx)), wl(wick.tensor(idx))
        np.testing.assert_allclose(wy.detach().numpy(), ty.detach().numpy())
        ty.sum().backward()
        wy.sum().backward()
        np.testing.assert_allclose(wl.weight.grad.numpy(), tl.weight.grad.numpy())
    d = nn.Dropout(0.5)
    x = wick.ones(1000)
    y = d(x)
    assert set(y.tolist()) <= {0.0, 2.0}
    assert 350 < (y == 0).sum().item() < 650
    d.eval()
    assert d(x) is x or wick.equal(d(x), x)


@needs_torch
def test_functional_matches_torch():
    logits, labels = (6, 5), np.array([0, 4, 2, 2, 1, 3])
    check(lambda m, x, t: m.nn.functional.cross_entropy(x, t), [logits, labels])
    check(lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction="sum",
                                                        label_smoothing=0.1), [logits, labels])
    check(lambda m, x, t: m.nn.functional.cross_entropy(x, t, ignore_index=2), [logits, labels])
    w = np.abs(np.random.default_rng(5).standard_normal(5)) + 0.1
    check(lambda m, x, t, w: m.nn.functional.cross_entropy(x, t, weight=w),
          [logits, labels, w], requires_grad=[True, False, False])
    probs = np.random.default_rng(6).dirichlet(np.ones(5), 6)
    check(lambda m, x, p: m.nn.functional.cross_entropy(x, p), [logits, probs],
          requires_grad=[True, False])
    check(lambda m, x, t: m.nn.functional.nll_loss(x.log_softmax(1), t), [logits, labels])
    check(lambda m, x, t: m.nn.functional.cross_entropy(x, t), [(2, 5, 3), np.array(
        [[0, 1, 4], [3, 3, 2]])])
    check(lambda m, a, b: (m.nn.functional.mse_loss(a, b), m.nn.functional.l1_loss(a, b),
                           m.nn.functional.mse_loss(a, b, reduction="none")), [(3, 4), (3, 4)])
    y = (np.random.default_rng(7).random((3, 4)) > 0.5).astype(np.float64)
    pw = np.array([1.0, 2.0, 0.5, 3.0])
    check(lambda m, x, y: m.nn.functional.binary_cross_entropy_with_logits(x, y), [(3, 4), y])
    check(lambda m, x, y, p: m.nn.functional.binary_cross_entropy_with_logits(
        x, y, pos_weight=p, reduction="sum"), [(3, 4), y, pw], requires_grad=[True, False, False])
    check(lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(3, 4), (5, 4), (5,)])
    check(lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1, stride=(2, 1)),
          [(1, 2, 5, 5), (3, 2, 3, 3)])
    check(lambda m, x: (m.nn.functional.max_pool2d(x, 2), m.nn.functional.avg_pool2d(x, 3, 1, 1),
                        m.nn.functional.adaptive_avg_pool2d(x, 1)), [(1, 2, 6, 6)])
    check(lambda m, x: (m.nn.functional.relu(x), m.nn.functional.gelu(x),
                        m.nn.functional.silu(x), m.nn.functional.softmax(x, dim=1),
                        m.nn.functional.log_softmax(x, 1), m.nn.functional.leaky_relu(x, 0.1)),
          [(3, 4)], noncontig=True)
    check(lambda m, x, w, b: m.nn.functional.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)])
    check(lambda m, x, rm, rv, w, b: m.nn.functional.batch_norm(x, rm, rv, w, b, training=False),
          [(4, 3), np.zeros(3), np.ones(3), (3,), (3,)],
          requires_grad=[True, False, False, True, True])
    check(lambda m, t: m.nn.functional.one_hot(t, 6), [labels], grad=False)
    check(lambda m, i, w: m.nn.functional.embedding(i, w), [labels, (6, 3)])


def test_relu_inplace_and_dropout_eval():
    x = wick.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    y = wick.ones(5)
    assert wick.equal(F.dropout(y, 0.5, training=False), y)


def test_init():
    w = nn.Parameter(wick.empty(50, 40))
    assert nn.init.kaiming_uniform_(w, a=5 ** 0.5) is w
    assert w.abs().max().item() <= 1 / 40 ** 0.5 + 1e-6
    nn.init.xavier_normal_(w)
    assert abs(w.std().item() - (2 / 90) ** 0.5) < 0.02
    nn.init.constant_(w, 0.5)
    assert w.mean().item() == 0.5
    nn.init.zeros_(w)
    nn.init.ones_(w)
    nn.init.normal_(w, 2.0, 0.1)
    nn.init.uniform_(w, -1, 1)
    nn.init.xavier_uniform_(w)
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert nn.init.calculate_gain("relu") == pytest.approx(2 ** 0.5)
    assert w.requires_grad and w.grad is None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])
        self.head = nn.Sequential(OrderedDict(act=nn.ReLU(), out=nn.Linear(8, 3)))
        self.scale = nn.Parameter(wick.ones(1))
        self.register_buffer("steps", wick.zeros(1))
        self.register_buffer("cache", wick.zeros(2), persistent=False)
        self.not_registered = wick.zeros(1)

    def forward(self, x):
        x = self.fc1(x)
        for b in self.blocks:
            x = b(x).relu()
        return self.head(x) * self.scale


def test_module_subclass_registration():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "blocks.0.weight", "blocks.0.bias",
                     "blocks.1.weight", "blocks.1.bias", "head.out.weight", "head.out.bias"]
    assert len(list(net.parameters())) == 9
    assert [n for n, _ in net.named_buffers()] == ["steps", "cache"]
    assert list(net.state_dict().keys()) == ["scale", "steps"] + names[1:]
    assert [n for n, _ in net.named_children()] == ["fc1", "blocks", "head"]
    assert len(list(net.modules())) == 8
    assert isinstance(net.fc1.weight, nn.Parameter) and net.fc1.weight.requires_grad
    assert net(wick.randn(2, 4)).shape == (2, 3)
    net.fc1 = nn.Linear(4, 8, bias=False)
    assert "fc1.bias" not in dict(net.named_parameters())
    net.scale = None
    assert "scale" not in dict(net.named_parameters())
    with pytest.raises(TypeError):
        net.fc1.weight = wick.zeros(8, 4)  # a plain tensor where a Parameter is registered
    with pytest.raises(AttributeError):
        net.missing
    del net.blocks
    assert "blocks.0.weight" not in dict(net.named_parameters())


def test_train_eval_zero_grad_apply_to():
    net = Net()
    net.eval()
    assert all(not m.training for m in net.modules())
    net.train()
    assert net.head.act.training
    net(wick.randn(2, 4)).sum().backward()
    assert net.fc1.weight.grad is not None
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and "Linear" in seen
    w = net.fc1.weight
    net.double()
    assert net.fc1.weight is w and w.dtype is wick.float64 and net.steps.dtype is wick.float64
    net.to(wick.float32)
    assert w.dtype is wick.float32
    with pytest.raises(RuntimeError, match="CUDA"):
        net.cuda()


def test_state_dict_round_trip(tmp_path):
    a, b = Net(), Net()
    b.load_state_dict(a.state_dict())
    x = wick.randn(3, 4)
    assert wick.allclose(a(x), b(x))
    path = tmp_path / "net.safetensors"
    wick.save(a.state_dict(), path)
    c = Net()
    result = c.load_state_dict(wick.load(path))
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert wick.allclose(a(x), c(x))
    sd = a.state_dict()
    del sd["fc1.bias"]
    sd["extra"] = wick.zeros(1)
    with pytest.raises(RuntimeError, match='Missing key.*"fc1.bias".*\n.*Unexpected key.*"extra"'):
        c.load_state_dict(sd)
    assert c.load_state_dict(sd, strict=False).missing_keys == ["fc1.bias"]
    bad = a.state_dict()
    bad["fc1.weight"] = wick.zeros(2, 2)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight"):
        c.load_state_dict(bad)


@needs_torch
def test_repr_matches_torch():
    def build(m):
        return m.Sequential(m.Conv2d(1, 8, 3, padding=1), m.BatchNorm2d(8), m.ReLU(),
                            m.MaxPool2d(2), m.Dropout(0.25), m.Flatten(), m.Linear(8, 2),
                            m.LayerNorm(2), m.GELU(), m.Embedding(3, 4))
    assert repr(build(nn)) == repr(build(torch.nn))
    assert repr(nn.Parameter(wick.ones(2))).startswith("Parameter containing:\ntensor([1., 1.]")


def test_deepcopy_and_parameter():
    net = Net()
    twin = copy.deepcopy(net)
    assert twin.fc1.weight is not net.fc1.weight
    assert isinstance(twin.fc1.weight, nn.Parameter)
    assert wick.equal(twin.fc1.weight, net.fc1.weight)
    p = nn.Parameter(wick.zeros(2), requires_grad=False)
    assert not p.requires_grad


def test_forward_hooks_and_missing_forward():
    lin = nn.Linear(2, 2)
    calls = []
    h = lin.register_forward_hook(lambda m, inp, out: calls.append(out.shape))
    lin(wick.zeros(1, 2))
    h.remove()
    lin(wick.zeros(1, 2))
    assert calls == [(1, 2)]
    with pytest.raises(NotImplementedError):
        nn.Module()(wick.zeros(1))


def test_clip_grad_norm():
    p = nn.Parameter(wick.tensor([3.0, 4.0]))
    p.grad = wick.tensor([3.0, 4.0])
    norm = nn.utils.clip_grad_norm_([p], 1.0)
    assert norm.item() == pytest.approx(5.0)
    assert p.grad.tolist() == pytest.approx([0.6, 0.8], rel=1e-5)
    nn.utils.clip_grad_norm_(p, 0.1, norm_type="inf")
    assert p.grad.abs().max().item() == pytest.approx(0.1, rel=1e-4)


def test_conv2d_backward_is_reproducible():
    """With a fixed thread count, the same inputs give bit-identical gradients on every run, so
    one seed gives one training run (the weight gradient is summed over images by threads; they
    must always sum the same images in the same order)."""
    threads = wick.get_num_threads()
    wick.set_num_threads(max(threads, 2))
    try:
        wick.manual_seed(0)
        x, w = wick.randn(24, 8, 12, 12), wick.randn(16, 8, 3, 3)
        grads = []
        for _ in range(6):
            wi = w.clone().requires_grad_()
            F.conv2d(x, wi, padding=1).pow(2).sum().backward()
            grads.append(wi.grad.numpy())
    finally:
        wick.set_num_threads(threads)
    for g in grads[1:]:
        np.testing.assert_array_equal(g, grads[0])


@needs_torch
@pytest.mark.parametrize("kernel,padding", [((3, 3), 1), ((3, 3), 0), ((3, 3), 2), ((1, 1), 0),
                                            ((5, 3), (2, 0)), ((3, 2), (1, 1))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv2d_input_gradient_as_a_convolution_matches_torch(kernel, padding, dtype):
    """Stride 1, no dilation, one group: the input gradient is computed as a convolution of the
    output gradient with the flipped weight (Note [input gradient as a convolution]). Every
    padding below the kernel size takes that path; the one at (3, 2) with padding 1 on the
    2-wide side does too, while the test above and the op-table's strided and grouped cases
    take im2col's adjoint."""
    tolerance = {"atol": 1e-9, "rtol": 1e-7} if dtype == np.float64 else {"atol": 1e-4, "rtol": 1e-4}
    check(lambda m, x, w: m.nn.functional.conv2d(x, w, padding=padding),
          [(3, 4, 9, 8), (5, 4) + kernel], dtype=dtype, **tolerance)


def test_conv2d_input_gradient_in_bfloat16_follows_float32():
    wick.manual_seed(0)
    x, w = wick.randn(4, 8, 10, 10), wick.randn(6, 8, 3, 3) * 0.2
    grads = []
    for dtype in (wick.float32, wick.bfloat16):
        xi = x.to(dtype).detach().requires_grad_()
        F.conv2d(xi, w.to(dtype), padding=1).float().pow(2).sum().backward()
        grads.append(xi.grad.float().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=0.05, atol=0.05 * np.abs(grads[0]).max())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_clip_grad_norm_of_16_bit_gradients_does_not_overflow(dtype):
    """Each 2-norm is taken in float32 for 16-bit gradients: 400 values of 300 have a sum of
    squares (36e6) far past float16's largest value (65504), yet a norm of 6000."""
    p = nn.Parameter(wick.zeros(400, dtype=getattr(wick, dtype)))
    p.grad = wick.full((400,), 300.0, dtype=getattr(wick, dtype))
    total = nn.utils.clip_grad_norm_([p], max_norm=60.0)
    assert total.item() == pytest.approx(6000.0, rel=1e-2)  # returned in the gradients dtype
    assert p.grad.float().numpy() == pytest.approx(np.full(400, 3.0), rel=1e-2)


@needs_torch
def test_conv2d_with_fewer_images_than_threads_matches_torch():
    """Batch 1 on 2 threads takes the other path of Note [threads over images or inside the
    GEMM]: images one at a time, each GEMM split over the threads."""
    threads = wick.get_num_threads()
    wick.set_num_threads(max(threads, 2))
    try:
        check(lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, stride=2, padding=1, groups=2),
              [(1, 4, 9, 8), (6, 2, 3, 3), (6,)])
        check(lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1), [(1, 3, 70, 70),
                                                                          (16, 3, 3, 3)])
    finally:
        wick.set_num_threads(threads)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_training_matches_torch_on_a_large_offset_channel(dtype):
    """Training-mode batch norm forward and backward against PyTorch, with rows of 143 values
    (vector loops and their tails) and channels whose mean is up to 1000 times their spread, where
    float32 sums, or a variance taken as E[x^2] - mean^2, lose digits."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((6, 5, 13, 11)) * 0.1 + rng.uniform(-100, 100, (1, 5, 1, 1)))
    gy = rng.standard_normal(x.shape)
    weight, bias = rng.uniform(0.5, 2, 5), rng.uniform(-1, 1, 5)
    outs = {}
    for m in (wick, torch):
        xt = m.tensor(x.astype(dtype), requires_grad=True)
        bn = m.nn.BatchNorm2d(5, momentum=0.3).to(getattr(m, dtype))
        with m.no_grad():
            bn.weight.copy_(m.tensor(weight.astype(dtype)))
            bn.bias.copy_(m.tensor(bias.astype(dtype)))
        y = bn(xt)
        y.backward(m.tensor(gy.astype(dtype)))
        outs[m] = [t.detach().numpy() for t in (y, xt.grad, bn.weight.grad, bn.bias.grad,
                                                 bn.running_mean, bn.running_var)]
    rtol = 1e-4 if dtype == "float32" else 1e-10
    for name, got, want in zip(["y", "dx", "dw", "db", "running_mean", "running_var"],
                               outs[wick], outs[torch]):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max(),
                                   err_msg=name)
