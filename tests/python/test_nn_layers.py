"""wick.nn's convolution, pooling, normalization, resampling, distance and embedding-bag layers
against torch.nn 1.13: each built with the same arguments, the torch layer's state_dict loaded
into the wick one, then the same output, input gradient, parameter gradients and buffers;
state_dict keys and shapes, initialisation, repr, and bad constructor arguments. Also: every
layer lives in the file of wick.nn.modules that torch.nn.modules defines it in."""

import math

import numpy as np
import pytest

import wick
import wick.nn as nn
from reference import needs_torch, torch


def load_from_torch(tl, wl):
    """The torch layer's state_dict, loaded into the wick layer (strict: the same keys)."""
    wl.load_state_dict({k: wick.tensor(v.numpy()) for k, v in tl.state_dict().items()})


def compare(make, shapes, train=True, atol=1e-5, seed=0, steps=1, int_inputs=None):
    rng = np.random.default_rng(seed)
    tl, wl = make(torch.nn), make(nn)
    assert list(tl.state_dict().keys()) == list(wl.state_dict().keys())
    for (name, t), (_, w) in zip(tl.state_dict().items(), wl.state_dict().items()):
        assert tuple(t.shape) == tuple(w.shape), name
    load_from_torch(tl, wl)
    tl.train(train)
    wl.train(train)
    for _ in range(steps):
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        tx = [torch.tensor(a, requires_grad=True) for a in arrays]
        wx = [wick.tensor(a, requires_grad=True) for a in arrays]
        extra_t, extra_w = [], []
        for a in int_inputs or []:
            extra_t.append(torch.tensor(a))
            extra_w.append(wick.tensor(a))
        ty, wy = tl(*tx, *extra_t), wl(*wx, *extra_w)
        if isinstance(ty, tuple):  # return_indices
            np.testing.assert_array_equal(wy[1].numpy(), ty[1].numpy())
            ty, wy = ty[0], wy[0]
        np.testing.assert_allclose(wy.detach().numpy(), ty.detach().numpy(), atol=atol, rtol=1e-4)
        weights = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
        (ty * torch.tensor(weights)).sum().backward()
        (wy * wick.tensor(weights)).sum().backward()
        for w, t in zip(wx, tx):
            if t.grad is None:
                assert w.grad is None
                continue
            np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy(), atol=atol * 10, rtol=1e-3)
    tparams = dict(tl.named_parameters())
    for name, p in wl.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), atol=atol * 10,
                                   rtol=1e-3, err_msg=name)
    tbuffers = dict(tl.named_buffers())
    for name, b in wl.named_buffers():
        np.testing.assert_allclose(b.numpy(), tbuffers[name].numpy(), atol=atol, rtol=1e-4,
                                   err_msg=name)
    return tl, wl


LAYERS = {
    "conv1d": (lambda m: m.Conv1d(4, 6, 3, stride=2, padding=1), [(2, 4, 9)]),
    "conv1d_groups": (lambda m: m.Conv1d(4, 8, 2, dilation=2, groups=4, bias=False), [(3, 4, 7)]),
    "conv1d_same_unbatched": (lambda m: m.Conv1d(3, 2, 5, padding="same"), [(3, 8)]),
    "conv1d_reflect": (lambda m: m.Conv1d(3, 4, 3, padding=2, padding_mode="reflect"),
                       [(2, 3, 7)]),
    "conv1d_circular_same": (lambda m: m.Conv1d(3, 4, 4, padding="same", padding_mode="circular"),
                             [(2, 3, 7)]),
    "conv1d_replicate_unbatched": (lambda m: m.Conv1d(3, 2, 3, padding=1,
                                                      padding_mode="replicate"), [(3, 6)]),
    "conv_transpose2d": (lambda m: m.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                     output_padding=1), [(2, 4, 5, 4)]),
    "conv_transpose2d_groups": (lambda m: m.ConvTranspose2d(4, 6, (2, 3), stride=(1, 2),
                                                            groups=2, dilation=(2, 1),
                                                            bias=False), [(1, 4, 3, 5)]),
    "maxpool1d": (lambda m: m.MaxPool1d(3, stride=2, padding=1), [(2, 3, 10)]),
    "maxpool1d_indices": (lambda m: m.MaxPool1d(2, return_indices=True, ceil_mode=True),
                          [(2, 3, 9)]),
    "avgpool1d": (lambda m: m.AvgPool1d(3, stride=2, padding=1, count_include_pad=False),
                  [(2, 3, 10)]),
    "adaptive_avgpool1d": (lambda m: m.AdaptiveAvgPool1d(4), [(2, 3, 10)]),
    "adaptive_maxpool2d": (lambda m: m.AdaptiveMaxPool2d((3, None), return_indices=True),
                           [(2, 3, 7, 5)]),
    "groupnorm": (lambda m: m.GroupNorm(2, 6), [(3, 6, 4, 5)]),
    "groupnorm_noaffine": (lambda m: m.GroupNorm(3, 6, eps=1e-3, affine=False), [(3, 6, 7)]),
    "instancenorm2d": (lambda m: m.InstanceNorm2d(3), [(2, 3, 4, 5)]),
    "instancenorm2d_affine": (lambda m: m.InstanceNorm2d(3, affine=True), [(2, 3, 4, 5)]),
    "upsample_nearest": (lambda m: m.Upsample(scale_factor=2), [(2, 3, 4, 5)]),
    "upsample_bilinear": (lambda m: m.Upsample(size=(7, 3), mode="bilinear"), [(2, 3, 4, 5)]),
    "upsample_bilinear_corners": (lambda m: m.Upsample(scale_factor=1.5, mode="bilinear",
                                                       align_corners=True), [(2, 3, 4, 5)]),
    "upsample_linear": (lambda m: m.Upsample(size=9, mode="linear"), [(2, 3, 4)]),
    "pixelshuffle": (lambda m: m.PixelShuffle(2), [(2, 8, 3, 4)]),
    "pixelunshuffle": (lambda m: m.PixelUnshuffle(2), [(2, 2, 4, 6)]),
    "zeropad2d": (lambda m: m.ZeroPad2d((1, 2, 0, 3)), [(2, 3, 4, 5)]),
    "constantpad2d": (lambda m: m.ConstantPad2d(2, 3.5), [(3, 4, 5)]),
    "reflectionpad2d": (lambda m: m.ReflectionPad2d((3, 1, 2, 0)), [(2, 3, 4, 5)]),
    "replicationpad2d": (lambda m: m.ReplicationPad2d(2), [(2, 3, 4, 5)]),
    "unfold": (lambda m: m.Unfold((2, 3), padding=1, stride=2), [(2, 3, 5, 6)]),
    "fold": (lambda m: m.Fold((4, 5), 2, stride=1), [(2, 12, 12)]),
    "cosine": (lambda m: m.CosineSimilarity(dim=-1), [(3, 5), (3, 5)]),
    "pairwise": (lambda m: m.PairwiseDistance(p=1.0, keepdim=True), [(3, 5), (1, 5)]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(name):
    make, shapes = LAYERS[name]
    compare(make, shapes)
    compare(make, shapes, train=False)


@needs_torch
def test_instance_norm_running_stats_train_then_eval():
    make = lambda m: m.InstanceNorm2d(3, momentum=0.2, affine=True,  # noqa: E731
                                      track_running_stats=True)
    tl, wl = compare(make, [(4, 3, 5, 6)], train=True, steps=3)
    assert wl.num_batches_tracked.item() == 0  # PyTorch's instance norm does not count
    # eval() normalizes with the running statistics just learnt.
    x = np.random.default_rng(7).standard_normal((2, 3, 4, 4)).astype(np.float32)
    tl.eval()
    wl.eval()
    np.testing.assert_allclose(wl(wick.tensor(x)).detach().numpy(),
                               tl(torch.tensor(x)).detach().numpy(), atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(wl(wick.tensor(x[0])).detach().numpy(),
                               tl(torch.tensor(x[0])).detach().numpy(), atol=1e-5, rtol=1e-4)


@needs_torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_torch(mode):
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = np.array([0, 3, 3, 6])
    for pad in (None, 4):
        tl = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=pad)
        wl = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=pad)
        load_from_torch(tl, wl)
        ty = tl(torch.tensor(idx), torch.tensor(offsets))
        wy = wl(wick.tensor(idx), wick.tensor(offsets))
        np.testing.assert_allclose(wy.detach().numpy(), ty.detach().numpy(), rtol=1e-5)
        weights = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(np.float32)
        (ty * torch.tensor(weights)).sum().backward()
        (wy * wick.tensor(weights)).sum().backward()
        np.testing.assert_allclose(wl.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=1e-5,
                                   atol=1e-6)
    tl, wl = torch.nn.EmbeddingBag(5, 2, mode=mode), nn.EmbeddingBag(5, 2, mode=mode)
    load_from_torch(tl, wl)
    bags = np.array([[0, 2, 4], [1, 1, 3]])
    np.testing.assert_allclose(wl(wick.tensor(bags)).detach().numpy(),
                               tl(torch.tensor(bags)).detach().numpy(), rtol=1e-5)


@needs_torch
def test_embedding_bag_per_sample_weights():
    idx, offsets = np.array([0, 2, 1, 3, 3]), np.array([0, 2])
    psw = np.random.default_rng(0).standard_normal(5).astype(np.float32)
    tl, wl = torch.nn.EmbeddingBag(4, 3, mode="sum"), nn.EmbeddingBag(4, 3, mode="sum")
    load_from_torch(tl, wl)
    ty = tl(torch.tensor(idx), torch.tensor(offsets), torch.tensor(psw))
    wy = wl(wick.tensor(idx), wick.tensor(offsets), wick.tensor(psw))
    np.testing.assert_allclose(wy.detach().numpy(), ty.detach().numpy(), rtol=1e-5)


@needs_torch
def test_conv_transpose2d_output_size():
    tl, wl = torch.nn.ConvTranspose2d(2, 3, 3, stride=2), nn.ConvTranspose2d(2, 3, 3, stride=2)
    load_from_torch(tl, wl)
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    for size in ((9, 9), (10, 9), [1, 3, 10, 10]):
        ty = tl(torch.tensor(x), output_size=size)
        wy = wl(wick.tensor(x), output_size=size)
        np.testing.assert_allclose(wy.detach().numpy(), ty.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    with pytest.raises(ValueError, match="requested an output size of"):
        wl(wick.tensor(x), output_size=(12, 9))


@needs_torch
def test_initialisation_matches_torch_distribution():
    # Same bounds as PyTorch's _ConvNd.reset_parameters: kaiming_uniform(a=sqrt(5)) is
    # uniform in +-1/sqrt(fan_in); the transposed convolution's fan_in is weight dim 1 * k * k.
    for make, fan_in in [(lambda m: m.Conv1d(8, 16, 5), 8 * 5),
                         (lambda m: m.ConvTranspose2d(8, 12, 3, groups=2), 6 * 9)]:
        layer = make(nn)
        bound = 1 / math.sqrt(fan_in)
        for p in (layer.weight, layer.bias):
            assert np.abs(p.detach().numpy()).max() <= bound + 1e-7
        assert np.abs(layer.weight.detach().numpy()).max() > 0.9 * bound  # hundreds of draws
    bag = nn.EmbeddingBag(200, 50, padding_idx=3)
    w = bag.weight.detach().numpy()
    assert abs(w.std() - 1) < 0.05 and (w[3] == 0).all()
    g = nn.GroupNorm(2, 4)
    assert g.weight.tolist() == [1.0] * 4 and g.bias.tolist() == [0.0] * 4
    assert nn.InstanceNorm2d(3).state_dict() == {} or len(nn.InstanceNorm2d(3).state_dict()) == 0


@needs_torch
def test_repr_matches_torch():
    def build(m):
        return m.Sequential(m.Conv1d(2, 4, 3, padding=1, padding_mode="reflect"),
                            m.ConvTranspose2d(4, 2, 3, stride=2),
                            m.MaxPool1d(2), m.AvgPool1d(3), m.AdaptiveAvgPool1d(4),
                            m.AdaptiveMaxPool2d((2, 2)), m.GroupNorm(2, 4), m.InstanceNorm2d(4),
                            m.Dropout2d(0.3), m.Upsample(scale_factor=2.0, mode="bilinear"),
                            m.PixelShuffle(2), m.ZeroPad2d(1), m.ConstantPad2d(2, 1.5),
                            m.ReflectionPad2d((1, 0, 2, 1)), m.ReplicationPad2d(1),
                            m.Unfold(2), m.Fold((3, 3), 2), m.CosineSimilarity(),
                            m.PairwiseDistance(), m.EmbeddingBag(5, 3, mode="sum"))
    assert repr(build(nn)) == repr(build(torch.nn))


def test_dropout2d_module():
    d = nn.Dropout2d(0.5)
    x = wick.ones(4, 32, 2, 2)
    y = d(x).reshape(4, 32, 4)
    assert ((y == 0).all(2) | (y == 2).all(2)).all().item()
    d.eval()
    assert wick.equal(d(x), x)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(-0.1)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv1d(3, 6, 2, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.ConvTranspose2d(4, 6, 2, groups=4)
    with pytest.raises(TypeError, match="ConvTranspose2d.*kernel_size must be an int"):
        nn.ConvTranspose2d(4, 6, 2.5)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
        nn.ConvTranspose2d(4, 6, 2, padding_mode="reflect")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv1d(4, 6, 2, padding_mode="mirror")
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        nn.EmbeddingBag(4, 2, mode="median")
    with pytest.raises(ValueError, match="padding must be an int or a 4-tuple"):
        nn.ZeroPad2d((1, 2))
    with pytest.raises(ValueError, match="expected input's size at dim=1 to match"):
        nn.InstanceNorm2d(3, affine=True)(wick.randn(2, 4, 3, 3))


# Where torch.nn.modules defines each layer (torch 1.13); wick.nn.modules mirrors it.
MODULE_FILES = {
    "activation": "ELU GELU SELU Hardsigmoid Hardswish Hardtanh LeakyReLU LogSoftmax Mish "
                  "MultiheadAttention ReLU ReLU6 Sigmoid SiLU Softmax Softplus Tanh",
    "batchnorm": "BatchNorm1d BatchNorm2d",
    "container": "ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "conv": "Conv1d Conv2d ConvTranspose2d",
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "Dropout Dropout2d",
    "flatten": "Flatten Unflatten",
    "fold": "Fold Unfold",
    "instancenorm": "InstanceNorm2d",
    "linear": "Identity Linear NonDynamicallyQuantizableLinear",
    "loss": "BCELoss BCEWithLogitsLoss CrossEntropyLoss HuberLoss KLDivLoss L1Loss MSELoss "
            "NLLLoss SmoothL1Loss",
    "module": "Module",
    "normalization": "GroupNorm LayerNorm",
    "padding": "ConstantPad2d ReflectionPad2d ReplicationPad2d ZeroPad2d",
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "pooling": "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveMaxPool2d AvgPool1d AvgPool2d "
               "MaxPool1d MaxPool2d",
    "rnn": "GRU GRUCell LSTM LSTMCell RNN RNNBase RNNCell RNNCellBase",
    "sparse": "Embedding EmbeddingBag",
    "transformer": "Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder "
                   "TransformerEncoderLayer",
    "upsampling": "Upsample",
}


@pytest.mark.parametrize("file", sorted(MODULE_FILES))
def test_layers_live_in_torchs_files(file):
    import importlib
    module = importlib.import_module(f"wick.nn.modules.{file}")
    for name in MODULE_FILES[file].split():
        cls = getattr(module, name)
        assert cls.__module__ == f"wick.nn.modules.{file}", name
        if name != "NonDynamicallyQuantizableLinear":  # torch.nn does not export it either
            assert getattr(nn, name) is cls, name
        if torch is not None:
            theirs = getattr(importlib.import_module(f"torch.nn.modules.{file}"), name)
            assert theirs.__module__ == f"torch.nn.modules.{file}", name


def test_every_layer_is_placed_and_no_file_leaks_into_wick_nn():
    placed = {n for names in MODULE_FILES.values() for n in names.split()}
    layers = {n for n in dir(nn) if isinstance(getattr(nn, n), type)
              and issubclass(getattr(nn, n), nn.Module)}
    assert layers <= placed, sorted(layers - placed)
    for file in MODULE_FILES:  # wick.nn.modules' __all__, as torch's
        assert not hasattr(nn, file), file


def test_multihead_attention_output_projection_is_torchs_class():
    mha = nn.MultiheadAttention(8, 2)
    assert type(mha.out_proj) is nn.modules.linear.NonDynamicallyQuantizableLinear
    assert isinstance(mha.out_proj, nn.Linear)
    layer = nn.modules.linear.NonDynamicallyQuantizableLinear(3, 2, bias=False)
    assert layer.bias is None and tuple(layer.weight.shape) == (2, 3)
