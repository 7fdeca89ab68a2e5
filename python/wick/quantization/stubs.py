"""QuantStub, DeQuantStub and QuantWrapper (torch.ao.quantization.stubs): markers for where a
model's float input becomes quantized and where its output goes back to float. In the float
model they pass their input through; prepare() gives QuantStub an observer; convert() turns
them into wick.nn.quantized.Quantize and DeQuantize."""

from wick.nn.modules.module import Module


class QuantStub(Module):
    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(Module):
    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(Module):
    """quant -> module -> dequant around a whole model, with the model's qconfig."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, x):
        return self.dequant(self.module(self.quant(x)))
