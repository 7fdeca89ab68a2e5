"""wick.models: networks with torchvision's names (torchvision.models), built from wick.nn."""

from wick.models.resnet import (  # noqa: F401
    BasicBlock,
    Bottleneck,
    CifarResNet,
    ResNet,
    resnet18,
    resnet20,
    resnet32,
    resnet34,
    resnet50,
    resnet56,
)
from wick.models.mnist import QuantizableMNISTNet  # noqa: F401
