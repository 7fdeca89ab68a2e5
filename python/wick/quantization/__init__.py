"""wick.quantization: post-training int8 quantization in PyTorch's eager-mode vocabulary
(torch.ao.quantization): observers, QConfig, fuse_modules, QuantStub/DeQuantStub, prepare,
calibrate, convert. The quantized modules are in wick.nn.quantized; docs/quantization.md
describes the flow and the arithmetic.

    model.eval()
    model = wick.quantization.fuse_modules(model, [["conv1", "relu1"], ["fc1", "relu3"]])
    model.qconfig = wick.quantization.get_default_qconfig("x86")
    prepared = wick.quantization.prepare(model)
    wick.quantization.calibrate(prepared, calibration_loader, num_batches=10)
    quantized = wick.quantization.convert(prepared)
"""

from wick.quantization._types import (  # noqa: F401
    int8,
    per_channel_affine,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qint8,
    qscheme,
    quint8,
    uint8,
)
from wick.quantization import observer  # noqa: F401
from wick.quantization.observer import (  # noqa: F401
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    ObserverBase,
    PercentileObserver,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    default_histogram_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
)
from wick.quantization.fake_quantize import (  # noqa: F401
    fake_quantize_per_channel_affine,
    fake_quantize_per_tensor_affine,
)
from wick.quantization.qconfig import (  # noqa: F401
    QConfig,
    default_per_channel_qconfig,
    default_qconfig,
    get_default_qconfig,
    minmax_qconfig,
    percentile_qconfig,
)
from wick.quantization.stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401
from wick.quantization.fuse_modules import fuse_conv_bn_eval, fuse_modules  # noqa: F401
from wick.quantization.quantize import (  # noqa: F401
    DEFAULT_STATIC_QUANT_MODULE_MAPPINGS,
    calibrate,
    convert,
    prepare,
    propagate_qconfig_,
)
