"""The classic MNIST CNN (examples/train_mnist.py's CNN, examples/mnist_models.h) written the way
eager-mode quantization needs it, as torchvision.models.quantization writes its networks: every
relu, the pool and the flatten are modules, and QuantStub / DeQuantStub mark where int8 begins
and ends. Its parameter names are the CNN's, so a trained CNN's state_dict loads into it."""

import wick.nn as nn
import wick.quantization as wq

# the (layer, relu) pairs that quantized kernels run as one (ConvReLU2d, LinearReLU)
FUSE_PATTERNS = [["conv1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"]]


class QuantizableMNISTNet(nn.Module):
    """conv 1->32 3x3, ReLU, conv 32->64 3x3, ReLU, max-pool 2, dropout 0.25, flatten,
    9216 -> 128, ReLU, 128 -> 10; QuantStub before and DeQuantStub after (identities until
    wick.quantization.convert)."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.quant = wq.QuantStub()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.relu2 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.dropout = nn.Dropout(0.25)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(9216, 128)
        self.relu3 = nn.ReLU()
        self.fc2 = nn.Linear(128, num_classes)
        self.dequant = wq.DeQuantStub()

    def forward(self, x):
        x = self.relu2(self.conv2(self.relu1(self.conv1(self.quant(x)))))
        x = self.flatten(self.dropout(self.pool(x)))
        return self.dequant(self.fc2(self.relu3(self.fc1(x))))

    def fuse_model(self):
        """Fuses each layer with its relu, in place (torchvision's quantizable models' name)."""
        return wq.fuse_modules(self, FUSE_PATTERNS, inplace=True)
