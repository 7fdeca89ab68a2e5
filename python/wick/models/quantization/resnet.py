"""torchvision.models.quantization's ResNet-18/34: wick.models.ResNet with a block whose residual
addition and last relu are one FloatFunctional (add_relu), so that quantization can observe and
quantize the sum. One difference from torchvision: wick has no quantized average pooling, so the
network returns to float before the global pooling and quantizes again for the classifier
(quant_head); the classifier stays int8 and the pooling costs one small dequantize.

The CIFAR ResNet-20/32/56 (He et al.'s option-A shortcut, which torchvision does not have) the
same way. Its shortcut pads new channels with zeros, and in uint8 the real 0 is the zero point,
not 0: the shortcut returns to float for the padding and quantizes again with its own observer
(QuantizableZeroPadShortcut) - one more rounding on the two downsampling shortcuts only."""

import wick
import wick.nn.quantized as nnq
import wick.quantization as wq
from wick.models.resnet import BasicBlock, CifarResNet, ResNet, ZeroPadShortcut, _refuse_weights


class QuantizableBasicBlock(BasicBlock):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_relu = nnq.FloatFunctional()

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        # the shortcut after conv1: convert follows producers by tensor, and a float shortcut's
        # DeQuantStub (identity until convert) returns x itself
        identity = x if self.downsample is None else self.downsample(x)
        return self.add_relu.add_relu(self.bn2(self.conv2(out)), identity)

    def fuse_model(self):
        groups = [["conv1", "bn1", "relu"], ["conv2", "bn2"]]
        if isinstance(self.downsample, wick.nn.Sequential):  # conv1x1 + batch norm
            groups.append(["downsample.0", "downsample.1"])
        wq.fuse_modules(self, groups, inplace=True)


class _QuantizableEnds:
    """What both layouts add around their float network: QuantStub/DeQuantStub at the ends, the
    head in float between dequant_pool and quant_head, and fuse_model."""

    def _add_stubs(self):
        self.quant = wq.QuantStub()
        self.dequant = wq.DeQuantStub()
        self.dequant_pool = wq.DeQuantStub()
        self.quant_head = wq.QuantStub()

    def _head(self, x):
        x = wick.flatten(self.avgpool(self.dequant_pool(x)), 1)
        return self.dequant(self.fc(self.quant_head(x)))

    def fuse_model(self):
        """Fuses conv + batch norm (+ relu) everywhere, in place; call in eval mode."""
        wq.fuse_modules(self, ["conv1", "bn1", "relu"], inplace=True)
        for m in self.modules():
            if type(m) is QuantizableBasicBlock:
                m.fuse_model()
        return self


class QuantizableResNet(_QuantizableEnds, ResNet):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._add_stubs()

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(self.quant(x)))))
        return self._head(self.layer4(self.layer3(self.layer2(self.layer1(x)))))


class QuantizableZeroPadShortcut(ZeroPadShortcut):
    def __init__(self, stride, extra_channels):
        super().__init__(stride, extra_channels)
        self.dequant = wq.DeQuantStub()
        self.quant = wq.QuantStub()

    def forward(self, x):
        return self.quant(super().forward(self.dequant(x)))


class QuantizableCifarResNet(_QuantizableEnds, CifarResNet):
    def __init__(self, blocks_per_stage, **kwargs):
        super().__init__(blocks_per_stage, block=QuantizableBasicBlock,
                         shortcut=QuantizableZeroPadShortcut, **kwargs)
        self._add_stubs()

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(self.quant(x))))
        return self._head(self.layer3(self.layer2(self.layer1(x))))


def resnet20(**kwargs):
    return QuantizableCifarResNet(3, **kwargs)


def resnet32(**kwargs):
    return QuantizableCifarResNet(5, **kwargs)


def resnet56(**kwargs):
    return QuantizableCifarResNet(9, **kwargs)


def resnet18(*, weights=None, quantize=False, **kwargs):
    return _quantizable("resnet18", [2, 2, 2, 2], weights, quantize, kwargs)


def resnet34(*, weights=None, quantize=False, **kwargs):
    return _quantizable("resnet34", [3, 4, 6, 3], weights, quantize, kwargs)


def _quantizable(name, layers, weights, quantize, kwargs):
    _refuse_weights(name, weights, kwargs)
    if quantize:
        raise ValueError(f"[{name}] quantize=True needs torchvision's pretrained int8 weights, "
                         "which wick does not download: build the float model, load weights, "
                         "then fuse_model, prepare, calibrate and convert (wick.quantization)")
    return QuantizableResNet(QuantizableBasicBlock, layers, **kwargs)
