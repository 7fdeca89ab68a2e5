"""wick.models.quantization: networks written for eager-mode int8 quantization, as
torchvision.models.quantization writes them - QuantStub/DeQuantStub at the ends, every relu its own
module, residual additions through FloatFunctional, and fuse_model() - with the float networks'
parameter names, so a trained float state_dict loads into them. Quantize with wick.quantization:

    model = wick.models.quantization.resnet18()
    model.load_state_dict(float_model.state_dict())
    model.eval().fuse_model()
    model.qconfig = wick.quantization.get_default_qconfig("x86")
    prepared = wick.quantization.prepare(model)
    wick.quantization.calibrate(prepared, loader, num_batches=10)
    int8_model = wick.quantization.convert(prepared)
"""

from wick.models.quantization.mnist import QuantizableMNISTNet  # noqa: F401
from wick.models.quantization.resnet import (  # noqa: F401
    QuantizableBasicBlock,
    QuantizableCifarResNet,
    QuantizableResNet,
    QuantizableZeroPadShortcut,
    resnet18,
    resnet20,
    resnet32,
    resnet34,
    resnet56,
)
