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
rank 0 prints and saves). (The C++ example also draws an SVG chart of the curves.)
"""

import argparse
import csv
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):  # run from a source tree after scripts/build.sh
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]

import wick  # noqa: E402
import wick.nn.functional as F  # noqa: E402
from wick import datasets, nn, transforms  # noqa: E402
from wick.utils.data import DataLoader  # noqa: E402
from wick.utils.data.distributed import DistributedSampler  # noqa: E402


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


class ProgressBar:
    """One line that redraws itself on a terminal; in a log, a line every 10%."""

    def __init__(self, label, total):
        self.label, self.total = label, max(total, 1)
        self.terminal = sys.stdout.isatty()
        self.last_decile, self.last_draw = -1, 0.0

    def update(self, done, status, force=False):
        now = time.monotonic()
        decile = 10 * done // self.total
        if self.terminal:
            draw = force or now - self.last_draw > 0.1 or done == self.total
        else:
            draw = decile != self.last_decile and 0 < done < self.total
        if not draw:
            return
        self.last_draw, self.last_decile = now, decile
        filled = 24 * done // self.total
        end = "\033[K" if self.terminal else "\n"
        print(f"{chr(13) if self.terminal else ''}{self.label} [{'#' * filled}"
              f"{' ' * (24 - filled)}] {done}/{self.total}  {status}", end=end, flush=True)

    def finish(self, status):
        if self.terminal:
            self.update(self.total, status, force=True)
            print()
        else:
            print(f"{self.label} done: {status}", flush=True)


def make_optimizer(name, model, lr):
    if name == "adam":
        return wick.optim.Adam(model.parameters(), lr=lr)
    if name == "adamw":
        return wick.optim.AdamW(model.parameters(), lr=lr)
    if name == "sgd":
        return wick.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    raise SystemExit(f"[train_mnist] --optimizer must be adam, adamw or sgd; got '{name}'")


def train_epoch(model, optimizer, loader, epoch, epochs, device, amp_dtype, scaler, quiet):
    model.train()
    bar = ProgressBar(f"epoch {epoch}/{epochs}", len(loader))
    if quiet:
        bar.update = bar.finish = lambda *args, **kwargs: None
    start = time.perf_counter()
    loss_sum, correct, seen = 0.0, 0, 0
    for batch, (images, labels) in enumerate(loader, 1):
        images, labels = images.to(device), labels.to(device)
        with wick.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
            logits = model(images)
            loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        n = labels.shape[0]
        loss_sum += loss.item() * n
        correct += (logits.argmax(1) == labels).sum().item()
        seen += n
        seconds = time.perf_counter() - start
        bar.update(batch, f"loss {loss_sum / seen:.4f}  acc {100 * correct / seen:5.1f}%  "
                          f"{seen / seconds:6.0f} samples/s")
    seconds = time.perf_counter() - start
    result = {"loss": loss_sum / seen, "accuracy": correct / seen, "seconds": seconds,
              "samples_per_second": seen / seconds}
    bar.finish(f"loss {result['loss']:.4f}  acc {100 * result['accuracy']:5.1f}%  "
               f"{result['samples_per_second']:6.0f} samples/s")
    return result


@wick.no_grad()
def evaluate(model, loader, device):
    model.eval()
    loss_sum, correct, seen = 0.0, 0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
        correct += (logits.argmax(1) == labels).sum().item()
        seen += labels.shape[0]
    return {"loss": loss_sum / seen, "accuracy": correct / seen}


def resume(path, model, optimizer):
    """Loads a checkpoint written by --save into model and optimizer, or exits 2 with one line
    saying why it cannot (a missing or corrupt file, another model, a damaged optimizer state)."""
    try:
        checkpoint = wick.load(path)
        keys = ("model", "optimizer", "epoch")
        missing = [k for k in keys if not isinstance(checkpoint, dict) or k not in checkpoint]
        if missing:
            raise ValueError(f"not a train_mnist checkpoint: it has no {', '.join(missing)}")
        epoch = checkpoint["epoch"]
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"its epoch is {epoch!r}, not an integer >= 0")
        # Both are checked whole before either changes anything (all or nothing).
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    except (OSError, ValueError, TypeError, KeyError, RuntimeError) as e:
        message = " ".join(str(e).split())  # one line
        print(f"[train_mnist] cannot resume from {path}: {message}", file=sys.stderr)
        sys.exit(2)
    return checkpoint


def main():
    parser = argparse.ArgumentParser(description="Train an MLP or a CNN on MNIST digits with "
                                                 "wick, from Python.")
    parser.add_argument("--model", default="cnn", choices=["mlp", "cnn"],
                        help="mlp (784-256-10) or cnn (the classic two-conv network)")
    parser.add_argument("--epochs", type=int, default=3, help="epochs to train")
    parser.add_argument("--batch-size", type=int, default=64, help="examples per batch")
    parser.add_argument("--lr", type=float, default=0.001, help="learning rate")
    parser.add_argument("--optimizer", default="adam", help="adam, adamw or sgd (momentum 0.9)")
    parser.add_argument("--workers", type=int, default=2,
                        help="data-loader worker threads (0: load in the training thread)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for initialisation, shuffling and dropout")
    parser.add_argument("--data", default=os.path.join(ROOT, "assets", "mnist"),
                        help="folder with MNIST IDX files (raw or .gz)")
    parser.add_argument("--save", default="", help="write a training checkpoint (model, "
                        "optimizer, epoch; safetensors) here after every epoch")
    parser.add_argument("--resume", default="", help="continue from a checkpoint of --save")
    parser.add_argument("--metrics", default="runs/mnist_metrics_py.csv",
                        help="per-epoch metrics CSV")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads for the kernels (0: all cores)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cpu or cuda (with --ddp, each rank uses its own GPU over NCCL)")
    parser.add_argument("--amp", default="none", choices=["none", "bf16", "fp16"],
                        help="mixed precision (fp16 adds dynamic loss scaling)")
    parser.add_argument("--ddp", action="store_true",
                        help="data-parallel over the processes of mpirun "
                             "(MPI backend; NCCL with --device cuda)")
    parser.add_argument("--json", type=int, default=0,
                        help="1: end with one JSON line of results (as the C++ example)")
    args = parser.parse_args()
    if args.epochs <= 0 or args.batch_size <= 0:
        raise SystemExit("[train_mnist] --epochs and --batch-size must be positive")
    if args.device == "cuda" and not wick.cuda.is_available():
        raise SystemExit("[train_mnist] --device cuda: no CUDA device is available "
                         f"(wick built with CUDA: {wick.backends.cuda.is_built()})")
    if args.threads > 0:
        wick.set_num_threads(args.threads)

    rank, world = 0, 1
    if args.ddp:
        import wick.distributed as dist

        dist.init_process_group("nccl" if args.device == "cuda" else "mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
        if args.threads == 0:  # share the cores among the ranks of this machine
            wick.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    say = print if rank == 0 else (lambda *a, **k: None)
    amp_dtype = {"none": None, "bf16": wick.bfloat16, "fp16": wick.float16}[args.amp]
    scaler = wick.amp.GradScaler(args.device.split(":")[0], enabled=args.amp == "fp16")

    wick.manual_seed(args.seed)
    device = wick.device(args.device)
    if device.type == "cuda" and args.ddp:  # one GPU per rank of this machine
        device = wick.device("cuda", int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0")))
    model = (MLP() if args.model == "mlp" else CNN()).to(device)
    if args.ddp:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = make_optimizer(args.optimizer, model, args.lr)
    first_epoch = 1
    if args.resume:
        checkpoint = resume(args.resume, model, optimizer)
        first_epoch = checkpoint["epoch"] + 1
        say(f"resumed from {args.resume} after epoch {checkpoint['epoch']}")

    normalize = transforms.Compose([transforms.ToTensor(),
                                    transforms.Normalize((0.1307,), (0.3081,))])
    train_set = datasets.MNIST(args.data, train=True, transform=normalize)
    test_set = datasets.MNIST(args.data, train=False, transform=normalize)
    sampler = DistributedSampler(train_set, seed=args.seed) if args.ddp else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=sampler is None,
                              sampler=sampler, num_workers=args.workers,
                              pin_memory=device.type == "cuda")
    test_loader = DataLoader(test_set, batch_size=500, num_workers=args.workers)
    # An empty dataset (or one smaller than a drop_last batch) yields no batch: refuse it with
    # one line and exit status 2, rather than dividing by zero and printing -nan%.
    for what, dataset, loader in (("training", train_set, train_loader),
                                  ("test", test_set, test_loader)):
        if len(loader) == 0:
            print(f"[train_mnist] the {what} set in {args.data} has {len(dataset)} examples, "
                  f"which make no batch of {loader.batch_size}; there is nothing to train on or "
                  f"evaluate", file=sys.stderr)
            sys.exit(2)

    parameters = sum(p.numel() for p in model.parameters())
    say(f"{model}\n{parameters} parameters; {len(train_set)} training and {len(test_set)} "
        f"test digits from {args.data}; {args.workers} workers"
        + (f"; {world} ranks, batch {args.batch_size} each" if args.ddp else ""))

    os.makedirs(os.path.dirname(os.path.abspath(args.metrics)), exist_ok=True)
    columns = ["epoch", "train_loss", "train_accuracy", "test_loss", "test_accuracy",
               "samples_per_second", "seconds", "loader_wait_seconds", "loss_scale",
               "skipped_steps"]
    start = time.perf_counter()
    total_samples, total_seconds, total_wait = 0.0, 1e-9, 0.0
    test = {"accuracy": 0.0}
    with open(args.metrics if rank == 0 else os.devnull, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for epoch in range(first_epoch, args.epochs + 1):
            if sampler is not None:
                sampler.set_epoch(epoch - 1)
            train = train_epoch(model, optimizer, train_loader, epoch, args.epochs, device,
                                amp_dtype, scaler, quiet=rank != 0)
            train["samples_per_second"] *= world  # every rank trained as many samples
            stats = train_loader.stats() if hasattr(train_loader, "stats") else None
            wait = stats["epoch"]["wait_seconds"] if stats else 0.0
            test = evaluate(model, test_loader, device)
            say(f"  test: loss {test['loss']:.4f}  accuracy {100 * test['accuracy']:.2f}%  "
                  f"(loader wait {wait:.2f} s of {train['seconds']:.2f} s)")
            writer.writerow([epoch, f"{train['loss']:.6g}", f"{train['accuracy']:.6g}",
                             f"{test['loss']:.6g}", f"{test['accuracy']:.6g}",
                             f"{train['samples_per_second']:.6g}", f"{train['seconds']:.6g}",
                             f"{wait:.6g}", f"{scaler.get_scale():.6g}", scaler.skipped_steps])
            f.flush()
            total_samples += train["samples_per_second"] * train["seconds"]
            total_seconds += train["seconds"]
            total_wait += wait
            if args.save and rank == 0:
                wick.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                           "epoch": epoch}, args.save)
    seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    say(f"summary: {args.model}, {args.epochs} epochs, test accuracy "
          f"{100 * test['accuracy']:.2f}%, {seconds:.1f} s ({total_samples / total_seconds:.0f} "
          f"training samples/s, loader wait {total_wait:.2f} s), peak RSS {peak_mib:.1f} MiB")
    say(f"metrics: {args.metrics}")
    if args.ddp:
        wick.distributed.destroy_process_group()
    if args.json and rank == 0:
        print(json.dumps({"framework": "wick-python", "model": args.model,
                          "samples_per_second": round(total_samples / max(total_seconds, 1e-9), 1),
                          "threads": wick.get_num_threads(), "peak_rss_mib": round(peak_mib, 1),
                          "test_accuracy": round(test["accuracy"], 4)}))


if __name__ == "__main__":
    main()
