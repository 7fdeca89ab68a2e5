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
from wick.models import quantization  # noqa: F401
from wick.models.quantization import QuantizableMNISTNet  # noqa: F401
