"""Post-training int8 quantization of the MNIST CNN (examples/train_mnist.py's network) keeps its
accuracy: trained briefly on the committed digits (seeded), then fused, prepared, calibrated
over 10 batches and converted, the int8 model's accuracy on the 2,000 held-out digits is within
0.5 points of the float model's, with min-max and with histogram observers."""

import pytest

import wick
import wick.nn.functional as F
import wick.nn.quantized as nnq
import wick.quantization as wq
from wick.models import QuantizableMNISTNet
from wick.utils.data import DataLoader, TensorDataset


def _digits(train):
    data = wick.datasets.MNIST(None, train=train)  # assets/mnist
    x = (data.data.to(wick.float32) / 255 - 0.1307) / 0.3081
    return x.reshape(-1, 1, 28, 28), data.targets.to(wick.int64)


def _accuracy(model, x, y):
    correct = 0
    with wick.no_grad():
        for i in range(0, x.shape[0], 500):
            correct += (model(x[i:i + 500]).argmax(1) == y[i:i + 500]).sum().item()
    return 100.0 * correct / x.shape[0]


@pytest.fixture(scope="module")
def trained():
    """The CNN after one seeded pass over 2,560 training digits (Adam, batch 32)."""
    wick.manual_seed(0)
    x_train, y_train = _digits(True)
    x_test, y_test = _digits(False)
    model = QuantizableMNISTNet()
    optimizer = wick.optim.Adam(model.parameters(), lr=1e-3)
    order = wick.randperm(x_train.shape[0])[:2560]
    for i in range(0, order.shape[0], 32):
        idx = order[i:i + 32]
        loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    calibration = DataLoader(TensorDataset(x_train[order[:640]], y_train[order[:640]]),
                             batch_size=64)
    return model, calibration, x_test, y_test, _accuracy(model, x_test, y_test)


@pytest.mark.parametrize("activation", [wq.MinMaxObserver, wq.HistogramObserver],
                         ids=["minmax", "histogram"])
def test_int8_cnn_accuracy_within_half_a_point_of_float(trained, activation):
    model, calibration, x_test, y_test, float_accuracy = trained
    assert float_accuracy > 85.0  # the float model did learn
    fused = wq.fuse_modules(model, [["conv1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"]])
    fused.qconfig = wq.QConfig(activation=activation,
                               weight=wq.default_per_channel_weight_observer)
    prepared = wq.prepare(fused)
    wq.calibrate(prepared, calibration, num_batches=10, progress=False)
    quantized = wq.convert(prepared)
    assert type(quantized.conv2) is nnq.ConvReLU2d and type(quantized.fc1) is nnq.LinearReLU
    int8_accuracy = _accuracy(quantized, x_test, y_test)
    print(f"\n{activation.__name__}: float {float_accuracy:.2f}%, int8 {int8_accuracy:.2f}% "
          f"({nnq.backend()})")
    assert abs(int8_accuracy - float_accuracy) <= 0.5, (float_accuracy, int8_accuracy)
