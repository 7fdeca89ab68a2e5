"""The classic CNN on MNIST digits with wick.keras's compile / fit / evaluate: the training loop
of examples/train_mnist.py (progress lines, validation each epoch, a metrics CSV) in a dozen lines.

    /usr/bin/python3 examples/fit_mnist.py [EPOCHS]        (3 by default)

It reads the 10,000-digit subset in assets/mnist (8,000 training and 2,000 test digits)."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):  # run from a source tree after scripts/build.sh
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]

import wick  # noqa: E402
from wick import datasets, nn, transforms  # noqa: E402
from wick.keras.callbacks import CSVLogger  # noqa: E402
from wick.utils.data import DataLoader  # noqa: E402

wick.manual_seed(0)
net = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
                    nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
                    nn.Linear(9216, 128), nn.ReLU(), nn.Linear(128, 10))
normalize = transforms.Normalize((0.1307,), (0.3081,))
train = DataLoader(datasets.MNIST(train=True, transform=normalize), batch_size=64, shuffle=True,
                   num_workers=2)
test = DataLoader(datasets.MNIST(train=False, transform=normalize), batch_size=500)

model = wick.keras.Model(net)
model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"])
model.fit(train, epochs=int(sys.argv[1]) if len(sys.argv) > 1 else 3, validation_data=test,
          callbacks=[CSVLogger(os.path.join(ROOT, "runs", "fit_mnist_py.csv"))])
print(f"test accuracy: {100 * model.evaluate(test, verbose=0)['accuracy']:.2f}%")
