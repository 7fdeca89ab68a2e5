"""The PyTorch twin of examples/train_mnist.cpp, for benchmarks/mnist_vs_pytorch.py.

Same data (the IDX files in assets/mnist), same models, batch size, optimizer and normalisation;
prints one JSON line with the training throughput and memory. Run with /usr/bin/python3 (Debian's
python3-torch).
"""

import argparse
import gzip
import json
import os
import resource
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, count = int.from_bytes(data[0:4], "big"), int.from_bytes(data[4:8], "big")
    if magic == 2051:
        rows, cols = int.from_bytes(data[8:12], "big"), int.from_bytes(data[12:16], "big")
        return np.frombuffer(data, np.uint8, offset=16).reshape(count, 1, rows, cols)
    return np.frombuffer(data, np.uint8, offset=8).astype(np.int64)


def load(root, train):
    prefix = "train" if train else "t10k"
    find = lambda name: next(os.path.join(root, n) for n in (name, name + ".gz")
                             if os.path.exists(os.path.join(root, n)))
    images = read_idx(find(f"{prefix}-images-idx3-ubyte")).astype(np.float32) / 255.0
    labels = read_idx(find(f"{prefix}-labels-idx1-ubyte"))
    images = (images - 0.1307) / 0.3081
    return torch.from_numpy(images), torch.from_numpy(labels)


def make_model(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(), nn.Linear(9216, 128),
                         nn.ReLU(), nn.Linear(128, 10))


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="cnn")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", default="assets/mnist")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x, y = load(args.data, True)
    tx, ty = load(args.data, False)
    model = make_model(args.model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                         batch_size=args.batch_size, shuffle=True)
    baseline = rss_mib()
    seen, seconds = 0, 0.0
    for _ in range(args.epochs):
        model.train()
        start = time.perf_counter()
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += len(yb)
        seconds += time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model.eval()
    with torch.no_grad():
        accuracy = (model(tx).argmax(1) == ty).double().mean().item()
    print(json.dumps({"framework": "pytorch " + torch.__version__, "model": args.model,
                      "samples_per_second": seen / seconds, "threads": torch.get_num_threads(),
                      "peak_rss_mib": peak, "rss_growth_mib": peak - baseline,
                      "test_accuracy": accuracy}))


if __name__ == "__main__":
    main()
