"""Trains an MLP or the classic CNN on MNIST digits and reports test accuracy each epoch: the
Python twin of examples/train_mnist.cpp, with the same flags and the same output.

    /usr/bin/python3 examples/train_mnist.py --model cnn --epochs 3

It is a plain PyTorch-style script - an nn.Module subclass, a DataLoader loop, Adam, evaluation
under no_grad - written against wick. To run it on PyTorch, change the imports below to
`import torch as wick`, `from torch import nn`, `from torch.utils.data import DataLoader` and
`from torchvision import datasets, transforms` (wick.datasets.MNIST mirrors
torchvision.datasets.MNIST; pass --data to a folder in torchvision's layout).

By default it reads the 10,000-digit subset committed in assets/mnist (8,000 training and 2,000
test digits); --data DIR reads the official MNIST files from DIR instead. Every epoch appends a
row to the metrics CSV (--metrics); --save writes a checkpoint after every epoch and --resume
continues from one. --amp bf16|fp16 trains with mixed precision (autocast; fp16 adds a
GradScaler); --ddp trains data-parallel across the processes of
`mpirun -np N python3 examples/train_mnist.py --ddp` (each rank reads its own shard, and only
rank 0 prints and saves). The loop itself - progress, CSV, SVG chart, checkpoints - is
examples/common/training.py, which train_resnet.py shares.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):  # run from a source tree after scripts/build.sh
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # examples/common

import wick  # noqa: E402
import wick.nn.functional as F  # noqa: E402
from common import training  # noqa: E402
from wick import datasets, nn, transforms  # noqa: E402


class MLP(nn.Module):
    """flatten, 784 -> 256, ReLU, 256 -> 10"""

    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(self.flatten(x))))


class CNN(nn.Module):
    """conv 1->32 3x3, ReLU, conv 32->64 3x3, ReLU, max-pool 2, dropout 0.25, flatten,
    9216 -> 128, ReLU, 128 -> 10 (the network of examples/mnist_models.h)"""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(x).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


def make_optimizer(name, model, lr):
    if name == "adam":
        return wick.optim.Adam(model.parameters(), lr=lr)
    if name == "adamw":
        return wick.optim.AdamW(model.parameters(), lr=lr)
    if name == "sgd":
        return wick.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    raise SystemExit(f"[train_mnist] --optimizer must be adam, adamw or sgd; got '{name}'")


def main():
    parser = argparse.ArgumentParser(description="Train an MLP or a CNN on MNIST digits with "
                                                 "wick, from Python.")
    parser.add_argument("--model", default="cnn", choices=["mlp", "cnn"],
                        help="mlp (784-256-10) or cnn (the classic two-conv network)")
    parser.add_argument("--optimizer", default="adam", help="adam, adamw or sgd (momentum 0.9)")
    parser.add_argument("--data", default=os.path.join(ROOT, "assets", "mnist"),
                        help="folder with MNIST IDX files (raw or .gz)")
    training.add_arguments(parser, epochs=3, batch_size=64, lr=0.001,
                           metrics="runs/mnist_metrics_py.csv")
    args = parser.parse_args()
    trainer = training.Trainer("train_mnist", args)

    wick.manual_seed(args.seed)
    model = (MLP() if args.model == "mlp" else CNN()).to(trainer.device)
    optimizer = make_optimizer(args.optimizer, model, args.lr)
    normalize = transforms.Compose([transforms.ToTensor(),
                                    transforms.Normalize((0.1307,), (0.3081,))])
    train_set = datasets.MNIST(args.data, train=True, transform=normalize)
    test_set = datasets.MNIST(args.data, train=False, transform=normalize)
    train_loader = trainer.loader(train_set, train=True)
    test_loader = trainer.loader(test_set, train=False, batch_size=500)
    trainer.say(f"MNIST digits from {args.data}")
    trainer.fit(model, optimizer, None, train_loader, test_loader, args.model)


if __name__ == "__main__":
    main()
