"""wick.models against torchvision (Debian's python3-torchvision 0.14): the ImageNet ResNets have
torchvision's state_dict keys, shapes and order, so torchvision's weights load and give the same
logits; the CIFAR ResNets have the paper's depth and parameter count, and train."""

import json
import os
import subprocess

import numpy as np
import pytest

import wick
import wick.models as models
from conftest import BUILD
from reference import torch

try:
    import torchvision
except ImportError:
    torchvision = None

needs_torchvision = pytest.mark.skipif(torchvision is None or torch is None,
                                       reason="torchvision (python3-torchvision) is not installed")


def torchvision_model(name, seed=0, **kwargs):
    torch.manual_seed(seed)
    return getattr(torchvision.models, name)(weights=None, **kwargs).eval()


def load_torchvision_weights(model, reference):
    model.load_state_dict({k: wick.tensor(v.detach().numpy())
                           for k, v in reference.state_dict().items()})
    return model.eval()


@needs_torchvision
@pytest.mark.parametrize("name", ["resnet18", "resnet34", "resnet50"])
def test_state_dict_matches_torchvision(name):
    ours = getattr(models, name)(num_classes=17).state_dict()
    theirs = torchvision_model(name, num_classes=17).state_dict()
    assert list(ours) == list(theirs)
    for key in theirs:
        assert tuple(ours[key].shape) == tuple(theirs[key].shape), key


@needs_torchvision
@pytest.mark.parametrize("name,size", [("resnet18", 64), ("resnet50", 64)])
def test_torchvision_weights_give_torchvisions_logits(name, size):
    """Random torchvision weights (seeded; nothing is downloaded), non-trivial batch-norm running
    statistics from a few training-mode passes, then eval-mode logits compared. Pretrained
    torchvision weights a user has load the same way."""
    reference = torchvision_model(name, seed=1)
    reference.train()
    with torch.no_grad():
        for seed in range(3):
            reference(torch.randn(4, 3, size, size, generator=torch.Generator().manual_seed(seed)))
    reference.eval()
    model = load_torchvision_weights(getattr(models, name)(), reference)
    x = np.random.default_rng(2).standard_normal((2, 3, size, size)).astype(np.float32)
    with torch.no_grad():
        expected = reference(torch.tensor(x)).numpy()
    with wick.no_grad():
        got = model(wick.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


CLASSIFY = os.path.join(BUILD, "examples", "classify_resnet")
needs_classify = pytest.mark.skipif(not os.path.exists(CLASSIFY), reason=f"{CLASSIFY} not built")


def classify(*args):
    return subprocess.run([CLASSIFY, *args], capture_output=True, text=True, timeout=300)


@needs_torchvision
@needs_classify
def test_cpp_model_loads_torchvision_weights_and_gives_its_logits(tmp_path):
    """The C++ twin, examples/classify_resnet: torchvision's state_dict saved as safetensors
    loads into wick::models::resnet18 by name, and its logits are torchvision's to 1e-4."""
    reference = torchvision_model("resnet18", seed=3)
    reference.train()
    with torch.no_grad():
        reference(torch.randn(4, 3, 64, 64, generator=torch.Generator().manual_seed(0)))
    reference.eval()
    weights, images = str(tmp_path / "resnet18.safetensors"), str(tmp_path / "x.safetensors")
    wick.save({k: wick.tensor(v.numpy()) for k, v in reference.state_dict().items()}, weights)
    x = np.random.default_rng(4).standard_normal((2, 3, 64, 64)).astype(np.float32)
    wick.save({"input": wick.tensor(x)}, images)
    done = classify("--weights", weights, "--input", images, "--json", "1")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    with torch.no_grad():
        expected = reference(torch.tensor(x)).numpy()
    assert got["shape"] == [2, 1000]
    np.testing.assert_allclose(np.array(got["logits"]).reshape(2, 1000), expected, rtol=1e-4,
                               atol=1e-4)
    assert f"image 1: class {int(expected[1].argmax())}" in done.stdout


@needs_classify
def test_cpp_classifier_refuses_bad_arguments_in_one_line(tmp_path):
    weights = str(tmp_path / "w.safetensors")
    wick.save(models.resnet20().state_dict(), weights)
    for args, message in ((["--input", weights], "--weights and --input are required"),
                          (["--model", "vgg", "--weights", weights, "--input", weights],
                           "--model must be"),
                          (["--model", "resnet18", "--weights", weights, "--input", weights],
                           "conv1.weight"),
                          (["--model", "resnet20", "--classes", "10", "--weights", weights,
                            "--input", weights], "no tensor named")):
        done = classify(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_initialisation_follows_torchvision():
    wick.manual_seed(0)
    model = models.resnet18(zero_init_residual=True)
    conv = model.layer2[0].conv1.weight  # fan_out = 128 * 3 * 3
    assert float(conv.std()) == pytest.approx((2.0 / (128 * 9)) ** 0.5, rel=0.05)
    assert float(model.layer1[0].bn2.weight.abs().sum()) == 0  # zero_init_residual
    assert float(model.bn1.weight.sum()) == 64 and float(model.bn1.bias.abs().sum()) == 0


@pytest.mark.parametrize("name,depth,params", [("resnet20", 20, 269_722),
                                               ("resnet32", 32, 464_154),
                                               ("resnet56", 56, 853_018)])
def test_cifar_resnets_have_the_papers_depth_and_size(name, depth, params):
    model = getattr(models, name)()
    weighted = [m for m in model.modules() if isinstance(m, (wick.nn.Conv2d, wick.nn.Linear))]
    assert len(weighted) == depth  # 6n + 2 layers with weights: the shortcuts have none
    assert sum(p.numel() for p in model.parameters()) == params
    out = model(wick.randn(2, 3, 32, 32))
    assert tuple(out.shape) == (2, 10)


def test_same_seed_same_weights_as_the_cpp_twin():
    """The sums tests/cpp/test_models.cpp expects of wick::models::resnet20() after
    manual_seed(0): the two languages build the same network from one seed."""
    wick.manual_seed(0)
    params = list(models.resnet20().parameters())
    assert sum(float(p.double().sum()) for p in params) == pytest.approx(699.0178180569837,
                                                                         abs=1e-6)
    assert sum(float((p.double() ** 2).sum()) for p in params) == pytest.approx(
        1955.0462610848028, abs=1e-6)


def test_in_channels_and_num_classes():
    assert tuple(models.resnet20(in_channels=1, num_classes=7)(wick.randn(3, 1, 32, 32)).shape) \
        == (3, 7)
    assert tuple(models.resnet18(in_channels=1, num_classes=5)(wick.randn(1, 1, 64, 64)).shape) \
        == (1, 5)


def test_zero_pad_shortcut_subsamples_and_pads_channels():
    x = wick.randn(2, 16, 8, 8)
    y = models.resnet.ZeroPadShortcut(2, 16)(x)
    assert tuple(y.shape) == (2, 32, 4, 4)
    np.testing.assert_array_equal(y[:, 8:24].numpy(), x[:, :, ::2, ::2].numpy())
    assert float(y[:, :8].abs().sum()) == 0 and float(y[:, 24:].abs().sum()) == 0


def test_cifar_resnet_learns_a_small_batch():
    wick.manual_seed(0)
    model = models.resnet20(in_channels=1, num_classes=4)
    x, y = wick.randn(16, 1, 32, 32), wick.randint(0, 4, (16,))
    opt = wick.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(15):
        loss = wick.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_bad_arguments_name_the_model():
    with pytest.raises(ValueError, match=r"resnet18.*downloads nothing"):
        models.resnet18(weights="IMAGENET1K_V1")
    with pytest.raises(ValueError, match=r"CifarResNet.*blocks_per_stage.*0"):
        models.CifarResNet(0)
    with pytest.raises(ValueError, match=r"replace_stride_with_dilation"):
        models.ResNet(models.Bottleneck, [1, 1, 1, 1], replace_stride_with_dilation=[True])
