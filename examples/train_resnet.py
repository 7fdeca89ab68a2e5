"""Trains the CIFAR-style ResNet-20/32/56 of He et al. 2016 and reports test accuracy each epoch:
the Python twin of examples/train_resnet.cpp, with the same flags and the same output. With the
same seed the two build the same weights, see the same batches, crops and flips, and print the
same losses.

    /usr/bin/python3 examples/train_resnet.py --epochs 3            # MNIST digits, 32 x 32
    /usr/bin/python3 examples/train_resnet.py --data ~/cifar-10-batches-bin --epochs 30

By default it trains on the 10,000-digit MNIST subset committed in assets/mnist, each digit padded
from 28 x 28 to 32 x 32 and shifted by up to 2 pixels; --data DIR trains on the CIFAR-10 binary
files in DIR instead (random crops with padding 4 and horizontal flips; digits are not flipped, as
a mirrored 2 is not a 2). SGD with momentum and weight decay, a cosine schedule over every step.
The loop - progress, CSV, SVG chart, --save/--resume, --amp, --ddp, --device - is
examples/common/training.py, shared with train_mnist.py. To run it on PyTorch, change the imports
to `import torch as wick`, `from torchvision import datasets, transforms, models` (torchvision has
no resnet20: take CifarResNet from python/wick/models/resnet.py, which is plain PyTorch code).
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
from common import training  # noqa: E402
from wick import datasets, models, transforms  # noqa: E402

MODELS = {"resnet20": models.resnet20, "resnet32": models.resnet32, "resnet56": models.resnet56}


def load_images(folder):
    """(name, training set, test set, channels): MNIST digits padded to 32 x 32 (training ones
    shifted by up to 2 pixels) when `folder` is None, else CIFAR-10 with crops and flips."""
    if folder is None:
        normalize = transforms.Normalize((0.1307,), (0.3081,))
        train = transforms.Compose([transforms.Pad(2), transforms.RandomCrop(32, padding=2),
                                    normalize])
        test = transforms.Compose([transforms.Pad(2), normalize])
        folder = os.path.join(ROOT, "assets", "mnist")
        return ("MNIST digits", folder, datasets.MNIST(folder, train=True, transform=train),
                datasets.MNIST(folder, train=False, transform=test), 1)
    normalize = transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    train = transforms.Compose([transforms.RandomCrop(32, padding=4),
                                transforms.RandomHorizontalFlip(), normalize])
    return ("CIFAR-10 images", folder, datasets.CIFAR10(folder, train=True, transform=train),
            datasets.CIFAR10(folder, train=False, transform=normalize), 3)


def main():
    parser = argparse.ArgumentParser(description="Train a CIFAR-style ResNet on MNIST or "
                                                 "CIFAR-10 with wick, from Python.")
    parser.add_argument("--model", default="resnet20", choices=sorted(MODELS),
                        help="resnet20, resnet32 or resnet56 (He et al. 2016, CIFAR layout)")
    parser.add_argument("--data", default=None,
                        help="folder with the CIFAR-10 binary files; by default the MNIST "
                             "digits in assets/mnist")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    parser.add_argument("--weight-decay", type=float, default=0.0005, help="SGD weight decay")
    training.add_arguments(parser, epochs=3, batch_size=64, lr=0.1,
                           metrics="runs/resnet_metrics_py.csv")
    args = parser.parse_args()
    trainer = training.Trainer("train_resnet", args)
    try:
        name, folder, train_set, test_set, channels = load_images(args.data)
    except (OSError, RuntimeError, ValueError) as e:
        trainer.fail(" ".join(str(e).split()))

    # The order of random draws - model, then the loaders' seeds - is the C++ twin's.
    wick.manual_seed(args.seed)
    model = MODELS[args.model](num_classes=10, in_channels=channels).to(trainer.device)
    optimizer = wick.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                               weight_decay=args.weight_decay)
    train_loader = trainer.loader(train_set, train=True)
    test_loader = trainer.loader(test_set, train=False, batch_size=500)
    # Cosine over every step of the run, not per epoch: a short run still ends near zero.
    steps = args.epochs * trainer.optimizer_steps(len(train_loader))
    schedule = wick.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    trainer.say(f"{name} from {folder}; SGD lr {args.lr:g} momentum {args.momentum:g} weight "
                f"decay {args.weight_decay:g}, cosine over {args.epochs} epochs")
    trainer.fit(model, optimizer, schedule, train_loader, test_loader, args.model)


if __name__ == "__main__":
    main()
