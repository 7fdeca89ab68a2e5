"""Residual networks (He et al., 2016), in two layouts.

The ImageNet layout is torchvision's ResNet-18/34/50: the same classes, constructor arguments,
submodule names and initialisation, so a torchvision state_dict (pretrained weights a user has,
or a random one) loads as it is: conv1, bn1, layer1.0.conv1, layer1.0.downsample.0, ..., fc.

The CIFAR layout is the paper's section 4.2 network for 32x32 images: a 3x3 convolution to 16
channels, three stages of n basic blocks at 16, 32 and 64 channels (the second and third start
with stride 2), global average pooling and a linear classifier: 6n + 2 layers, so n = 3, 5, 9 give
ResNet-20, -32, -56. Its shortcuts are the paper's option A - identity, and when the shape changes
a stride-2 subsample padded with zero channels - so the shortcuts have no parameters (0.27M
parameters for ResNet-20, as in the paper's table 6).
"""

import wick
from wick import nn


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


def bn_relu(bn, relu, x, residual=None):
    """relu(bn(x) + residual). In training with a plain BatchNorm2d, one fused kernel
    (F.batch_norm_relu: one pass over the data each way instead of three); otherwise the separate
    modules, the graph that tracing, conv+BN folding and ONNX export expect - and what PyTorch
    runs when benchmarks/resnet_vs_pytorch.py builds this source with torch.nn (no forward_relu)."""
    fused = getattr(bn, "forward_relu", None)
    if fused is not None and bn.training and type(bn) is nn.BatchNorm2d and type(relu) is nn.ReLU:
        return fused(x, residual)
    out = bn(x)
    return relu(out if residual is None else out + residual)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm; the input (or its downsampled projection) is added
    before the last ReLU."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("[BasicBlock] only supports groups=1 and base_width=64")
        if dilation > 1:
            raise ValueError("[BasicBlock] dilation > 1 is not supported")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = bn_relu(self.bn1, self.relu, self.conv1(x))
        return bn_relu(self.bn2, self.relu, self.conv2(out), identity)


class Bottleneck(nn.Module):
    """1x1 down to `width` channels, 3x3 (carrying the stride, as torchvision's "ResNet V1.5"),
    1x1 up to planes * 4, with the shortcut added before the last ReLU."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = bn_relu(self.bn1, self.relu, self.conv1(x))
        out = bn_relu(self.bn2, self.relu, self.conv2(out))
        return bn_relu(self.bn3, self.relu, self.conv3(out), identity)


class ResNet(nn.Module):
    """torchvision.models.ResNet; `in_channels` (wick's addition) is the input's channel count."""

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1,
                 width_per_group=64, replace_stride_with_dilation=None, norm_layer=None,
                 in_channels=3):
        super().__init__()
        self._norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes, self.dilation = 64, 1
        replace_stride_with_dilation = replace_stride_with_dilation or [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("[ResNet] replace_stride_with_dilation should be None or a 3-element "
                             f"tuple; got {replace_stride_with_dilation}")
        self.groups, self.base_width = groups, width_per_group
        self.conv1 = nn.Conv2d(in_channels, self.inplanes, kernel_size=7, stride=2, padding=3,
                               bias=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], 2, replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], 2, replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], 2, replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        _initialise(self, zero_init_residual)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer, downsample, previous_dilation = self._norm_layer, None, self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                         dilation=self.dilation, norm_layer=norm_layer)
                   for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(bn_relu(self.bn1, self.relu, self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(wick.flatten(self.avgpool(x), 1))


def _initialise(model, zero_init_residual):
    """torchvision's: He-normal (fan_out) convolutions, unit/zero norms, the linear layer's own
    default; optionally each residual branch's last norm at zero, so every block starts as the
    identity."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
    if zero_init_residual:
        for m in model.modules():
            if isinstance(m, Bottleneck):
                nn.init.constant_(m.bn3.weight, 0)
            elif isinstance(m, BasicBlock):
                nn.init.constant_(m.bn2.weight, 0)


def _refuse_weights(name, weights, kwargs):
    if weights is not None:
        raise ValueError(f"[{name}] wick downloads nothing: build the model with weights=None and "
                         f"load a state_dict (torchvision's keys match)")
    kwargs.pop("progress", None)


def resnet18(*, weights=None, **kwargs):
    _refuse_weights("resnet18", weights, kwargs)
    return ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)


def resnet34(*, weights=None, **kwargs):
    _refuse_weights("resnet34", weights, kwargs)
    return ResNet(BasicBlock, [3, 4, 6, 3], **kwargs)


def resnet50(*, weights=None, **kwargs):
    _refuse_weights("resnet50", weights, kwargs)
    return ResNet(Bottleneck, [3, 4, 6, 3], **kwargs)


# ---- the CIFAR layout ----


class ZeroPadShortcut(nn.Module):
    """Option A: x[:, :, ::stride, ::stride] with the new channels zero (no parameters)."""

    def __init__(self, stride, extra_channels):
        super().__init__()
        self.stride, self.extra_channels = stride, extra_channels

    def forward(self, x):
        x = x[:, :, ::self.stride, ::self.stride]
        half = self.extra_channels // 2
        return nn.functional.pad(x, (0, 0, 0, 0, half, self.extra_channels - half))


class CifarResNet(nn.Module):
    """6n + 2 layers for 32x32 inputs (n = `blocks_per_stage`)."""

    def __init__(self, blocks_per_stage, num_classes=10, in_channels=3, block=None,
                 shortcut=None):
        super().__init__()
        block, shortcut = block or BasicBlock, shortcut or ZeroPadShortcut  # quantizable twins
        if blocks_per_stage < 1:
            raise ValueError(f"[CifarResNet] blocks_per_stage must be at least 1; got "
                             f"{blocks_per_stage}")
        self.conv1 = conv3x3(in_channels, 16)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        stages, inplanes = [], 16
        for planes, stride in ((16, 1), (32, 2), (64, 2)):
            blocks = []
            for i in range(blocks_per_stage):
                s = stride if i == 0 else 1
                pad = (shortcut(s, planes - inplanes)
                       if s != 1 or inplanes != planes else None)
                blocks.append(block(inplanes, planes, s, pad))
                inplanes = planes
            stages.append(nn.Sequential(*blocks))
        self.layer1, self.layer2, self.layer3 = stages
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(64, num_classes)
        _initialise(self, zero_init_residual=False)

    def forward(self, x):
        x = bn_relu(self.bn1, self.relu, self.conv1(x))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(wick.flatten(self.avgpool(x), 1))


def resnet20(**kwargs):
    return CifarResNet(3, **kwargs)


def resnet32(**kwargs):
    return CifarResNet(5, **kwargs)


def resnet56(**kwargs):
    return CifarResNet(9, **kwargs)
