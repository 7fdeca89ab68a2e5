"""Lab 03: a Linear layer and two optimizers, written over wick's tensors and wick.nn.Module,
then used to train an MLP on the MNIST digits in assets/mnist.

Module (wick.nn.Module, like torch.nn.Module and Keras' Layer) registers every Parameter you
assign as an attribute, so model.parameters() finds them; the optimizers see only that list."""

import math

import wick
from wick import nn


class Linear(nn.Module):
    """y = x @ W^T + b, W of shape (out, in): PyTorch's layout (Keras/TF store (in, out))."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        # TODO(03): __init__: Parameters W (out, in) and b (out,), both U(-1/sqrt(in), 1/sqrt(in))
        raise NotImplementedError("__init__: Parameters W (out, in) and b (out,), both U(-1/sqrt(in), 1/sqrt(in))")

    def forward(self, x):
        # TODO(03): forward: x @ weight.t() (+ bias)
        raise NotImplementedError("forward: x @ weight.t() (+ bias)")


class SGD:
    """PyTorch's SGD: g = grad + weight_decay * p; buf = momentum * buf + g (buf = g the first
    time); p -= lr * buf. (TF/Keras' momentum folds lr into the buffer instead: v = m*v - lr*g.)"""

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @wick.no_grad()
    def step(self):
        # TODO(03): step: for each p with a grad: decay, momentum buffer, in-place update
        raise NotImplementedError("step: for each p with a grad: decay, momentum buffer, in-place update")


class Adam:
    """Adam (Kingma & Ba): m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; with t steps taken,
    p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps). Two buffers per parameter: the
    optimizer state that doubles a model's memory (ZeRO shards exactly this)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.t = 0
        self.m = [wick.zeros_like(p) for p in self.params]
        self.v = [wick.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @wick.no_grad()
    def step(self):
        # TODO(03): step: t += 1; update m and v; bias-correct both; in-place update of p
        raise NotImplementedError("step: t += 1; update m and v; bias-correct both; in-place update of p")


def make_mlp(hidden=256):
    return nn.Sequential(nn.Flatten(), Linear(784, hidden), nn.ReLU(), Linear(hidden, 10))


def train_mnist(root, epochs=3, batch_size=64, lr=1e-3, seed=0):
    """Trains make_mlp() with Adam on the 8,000 training digits; returns test accuracy on the
    2,000 held out and the mean loss of each epoch."""
    from wick import datasets, transforms
    from wick.utils.data import DataLoader

    wick.manual_seed(seed)
    normalize = transforms.Normalize((0.1307,), (0.3081,))
    train = datasets.MNIST(root, train=True, transform=normalize)
    test = datasets.MNIST(root, train=False, transform=normalize)
    model = make_mlp()
    optimizer = Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        total, batches = 0.0, 0
        for x, y in DataLoader(train, batch_size=batch_size, shuffle=True):
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        losses.append(total / batches)
    correct = 0
    with wick.no_grad():
        for x, y in DataLoader(test, batch_size=500):
            correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(test), losses
