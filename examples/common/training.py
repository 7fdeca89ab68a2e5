"""The training loop that train_mnist.py and train_resnet.py share - the Python twin of
examples/common/trainer.{h,cpp}: the common flags, mixed precision (--amp), data-parallel set-up
(--ddp), the epoch loop with its progress bar, the metrics CSV and SVG chart, checkpoints and
--resume, and the closing summary. Nothing here is part of wick; it is plain PyTorch-style code.

    parser = argparse.ArgumentParser(...)
    training.add_arguments(parser, epochs=3, batch_size=64, lr=0.001, metrics="runs/x.csv")
    args = parser.parse_args()
    trainer = training.Trainer("train_x", args)        # threads, device, --ddp's process group
    wick.manual_seed(args.seed); model = ...; optimizer = ...
    train_loader = trainer.loader(train_set, train=True)
    test_loader = trainer.loader(test_set, train=False, batch_size=500)
    trainer.fit(model, optimizer, scheduler, train_loader, test_loader, "resnet20")
"""

import contextlib
import csv
import json
import os
import resource
import sys
import time

import wick
import wick.nn.functional as F
from wick import nn
from wick.utils.data import DataLoader, LoaderTimeline, loader_span
from wick.utils.data.distributed import DistributedSampler

from common.svg_chart import write_chart


def add_arguments(parser, epochs, batch_size, lr, metrics):
    """The flags every training program has, with the defaults that differ between them."""
    parser.add_argument("--epochs", type=int, default=epochs, help="epochs to train")
    parser.add_argument("--batch-size", type=int, default=batch_size,
                        help="examples per batch (per rank under --ddp)")
    parser.add_argument("--lr", type=float, default=lr, help="learning rate")
    parser.add_argument("--workers", type=int, default=2,
                        help="data-loader worker threads (0: load in the training thread)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for initialisation, shuffling, augmentation and dropout")
    parser.add_argument("--save", default="", help="write a training checkpoint (model, "
                        "optimizer, schedule, epoch) here after every epoch")
    parser.add_argument("--resume", default="", help="continue from a checkpoint of --save")
    parser.add_argument("--metrics", default=metrics,
                        help="per-epoch metrics CSV (a .svg chart is written next to it)")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads for the kernels (0: all cores)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cpu or cuda (with --ddp, each rank uses its own GPU over NCCL)")
    parser.add_argument("--amp", default="none", choices=["none", "bf16", "fp16"],
                        help="mixed precision (fp16 adds dynamic loss scaling)")
    parser.add_argument("--ddp", action="store_true",
                        help="data-parallel over the processes of mpirun "
                             "(MPI backend; NCCL with --device cuda)")
    parser.add_argument("--accumulate", type=int, default=1,
                        help="average the gradients of this many batches before each optimizer "
                             "step (under --ddp the backward passes before the last skip the "
                             "all-reduce: DDP's no_sync)")
    parser.add_argument("--loader-timeline", default="",
                        help="write a Chrome trace of the first epoch's data loading here (where "
                             "each batch's time went), and an SVG next to it")
    parser.add_argument("--steps-per-epoch", type=int, default=0,
                        help="train at most this many batches per epoch (0: all)")
    parser.add_argument("--stop-after-epoch", type=int, default=0,
                        help="end after this epoch, as if interrupted, with the schedule still "
                             "set for --epochs: --resume continues the same run (0: run all)")
    parser.add_argument("--json", type=int, default=0,
                        help="1: end with one JSON line of results (as the C++ example)")


class ProgressBar:
    """One line that redraws itself on a terminal; in a log, a line every 10%."""

    def __init__(self, label, total, quiet=False):
        self.label, self.total, self.quiet = label, max(total, 1), quiet
        self.terminal = sys.stdout.isatty()
        self.last_decile, self.last_draw = -1, 0.0

    def update(self, done, status, force=False):
        now = time.monotonic()
        decile = 10 * done // self.total
        if self.terminal:
            draw = force or now - self.last_draw > 0.1 or done == self.total
        else:
            draw = decile != self.last_decile and 0 < done < self.total
        if self.quiet or not draw:
            return
        self.last_draw, self.last_decile = now, decile
        filled = 24 * done // self.total
        end = "\033[K" if self.terminal else "\n"
        print(f"{chr(13) if self.terminal else ''}{self.label} [{'#' * filled}"
              f"{' ' * (24 - filled)}] {done}/{self.total}  {status}", end=end, flush=True)

    def finish(self, status):
        if self.quiet:
            return
        if self.terminal:
            self.update(self.total, status, force=True)
            print()
        else:
            print(f"{self.label} done: {status}", flush=True)


class Trainer:
    def __init__(self, program, args):
        """Applies --threads and --device, and under --ddp joins the process group (so the rank
        is known before the data is sharded). Bad flags exit 2 with one line."""
        self.program, self.args = program, args
        if args.epochs <= 0 or args.batch_size <= 0 or args.steps_per_epoch < 0:
            self.fail("--epochs and --batch-size must be positive, --steps-per-epoch not negative")
        if args.accumulate < 1:
            self.fail(f"--accumulate must be at least 1; got {args.accumulate}")
        if args.device == "cuda" and not wick.cuda.is_available():
            self.fail(f"--device cuda: no CUDA device is available (wick built with CUDA: "
                      f"{wick.backends.cuda.is_built()})")
        if args.threads > 0:
            wick.set_num_threads(args.threads)
        self.rank, self.world = 0, 1
        if args.ddp:
            import wick.distributed as dist

            dist.init_process_group("nccl" if args.device == "cuda" else "mpi")
            self.rank, self.world = dist.get_rank(), dist.get_world_size()
            if args.threads == 0:  # share the cores among the ranks of this machine
                wick.set_num_threads(max(1, (os.cpu_count() or 1) // self.world))
        self.device = wick.device(args.device)
        if self.device.type == "cuda" and args.ddp:  # one GPU per rank of this machine
            self.device = wick.device("cuda", int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0")))
        self.amp_dtype = {"none": None, "bf16": wick.bfloat16, "fp16": wick.float16}[args.amp]
        self.scaler = wick.amp.GradScaler(self.device.type, enabled=args.amp == "fp16")
        self.sampler = None
        # --loader-timeline: the training loader records its first epoch into this.
        self.loader_timeline = LoaderTimeline() if args.loader_timeline else None

    def say(self, *parts, **kwargs):
        if self.rank == 0:
            print(*parts, **kwargs)

    def fail(self, message):
        print(f"[{self.program}] {message}", file=sys.stderr)
        sys.exit(2)

    def optimizer_steps(self, batches):
        """Optimizer steps in an epoch of `batches` batches: one per --accumulate batches."""
        return -(-batches // self.args.accumulate)

    def loader(self, dataset, train, batch_size=None):
        """The training loader (shuffled, or each rank's shard under --ddp) or the test loader.
        An empty dataset (or one smaller than a batch) makes no batch: refused with one line and
        exit status 2, rather than dividing by zero and printing -nan%."""
        batch_size = batch_size or self.args.batch_size
        if train and self.args.ddp:
            # The seed a DataLoader would draw, as the C++ twin does: N ranks with batch B then
            # see the examples one process sees with batch N * B.
            seed = int(wick.randint(0, 2**62, (1,)).item())
            self.sampler = DistributedSampler(dataset, seed=seed)
        sampler = self.sampler if train else None
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=train and sampler is None,
                            sampler=sampler, num_workers=self.args.workers,
                            pin_memory=self.device.type == "cuda",
                            timeline=self.loader_timeline if train else None)
        if len(loader) == 0:
            what = "training" if train else "test"
            self.fail(f"the {what} set in {getattr(dataset, 'root', '?')} has {len(dataset)} "
                      f"examples, which make no batch of {batch_size}; there is nothing to train "
                      f"on or evaluate")
        return loader

    def resume(self, path, model, optimizer, scheduler):
        """Loads a --save checkpoint, or exits 2 with one line saying why it cannot (a missing or
        corrupt file, another model, a damaged optimizer state). All or nothing."""
        try:
            checkpoint = wick.load(path)
            keys = ("model", "optimizer", "epoch") + (("scheduler",) if scheduler else ())
            missing = [k for k in keys if not isinstance(checkpoint, dict) or k not in checkpoint]
            if missing:
                raise ValueError(f"not a {self.program} checkpoint: it has no {', '.join(missing)}")
            epoch = checkpoint["epoch"]
            if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
                raise ValueError(f"its epoch is {epoch!r}, not an integer >= 0")
            model.load_state_dict(checkpoint["model"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            if scheduler:
                scheduler.load_state_dict(checkpoint["scheduler"])
            if "scaler" in checkpoint and self.scaler.is_enabled():
                self.scaler.load_state_dict(checkpoint["scaler"])
        except (OSError, ValueError, TypeError, KeyError, RuntimeError) as e:
            self.fail(f"cannot resume from {path}: {' '.join(str(e).split())}")
        self.say(f"resumed from {path} after epoch {epoch}")
        return epoch

    def finish_loader_timeline(self, epoch):
        """--loader-timeline: the first epoch's spans, then recording stops (the loader keeps
        the timeline, so later epochs would otherwise add to it)."""
        timeline = self.loader_timeline
        if timeline is None or not timeline.recording():
            return
        timeline.set_recording(False)
        if self.rank != 0:
            return
        path = self.args.loader_timeline
        svg = os.path.splitext(path)[0] + ".svg"
        timeline.write_chrome_trace(path)
        timeline.write_svg(svg, f"{self.program}: data loading in epoch {epoch}, "
                                f"{self.args.workers} workers")
        self.say(f"\nloader timeline of epoch {epoch}: {path} and {svg}\n  {timeline.summary()}")

    def train_epoch(self, model, optimizer, scheduler, loader, epoch, curve):
        """One epoch: cross-entropy on the logits; the optimizer, then the scheduler (if any),
        stepped every batch - a schedule counts steps, not epochs."""
        model.train()
        steps = len(loader)
        if self.args.steps_per_epoch > 0:
            steps = min(steps, self.args.steps_per_epoch)
        bar = ProgressBar(f"epoch {epoch}/{self.args.epochs}", steps, quiet=self.rank != 0)
        # --accumulate K: batches of one group make one optimizer step, each loss divided by the
        # group's size (the last group of an epoch may be shorter), as the C++ twin does.
        accumulate = self.args.accumulate
        start = time.perf_counter()
        loss_sum, correct, seen = 0.0, 0, 0
        for batch, (images, labels) in enumerate(loader, 1):
            if batch > steps:  # --steps-per-epoch
                break
            with loader_span("to device"):  # recorded only under --loader-timeline
                images, labels = images.to(self.device), labels.to(self.device)
            position = (batch - 1) % accumulate
            group = min(accumulate, steps - (batch - 1 - position))
            steps_now = position + 1 == group
            # DDP's no_sync() for every batch of a group but the last: the forward decides
            # whether its backward all-reduces, so forward and backward are both inside.
            no_sync = (model.no_sync() if self.args.ddp and not steps_now
                       else contextlib.nullcontext())
            with loader_span("train step"):
                with no_sync:
                    with wick.autocast(self.device.type, dtype=self.amp_dtype,
                                       enabled=self.amp_dtype is not None):
                        logits = model(images)
                        loss = F.cross_entropy(logits, labels)
                    if position == 0:
                        optimizer.zero_grad()
                    self.scaler.scale(loss / group if group > 1 else loss).backward()
                if steps_now:
                    self.scaler.step(optimizer)
                    self.scaler.update()
                    if scheduler:
                        scheduler.step()
            n, batch_loss = labels.shape[0], loss.item()
            loss_sum += batch_loss * n
            correct += (logits.argmax(1) == labels).sum().item()
            seen += n
            curve.append((epoch - 1 + batch / steps, batch_loss))
            bar.update(batch, f"loss {loss_sum / seen:.4f}  acc {100 * correct / seen:5.1f}%  "
                              f"{self.world * seen / (time.perf_counter() - start):6.0f} samples/s")
        if self.args.ddp:  # the epoch's figures over all ranks' shards
            totals = wick.tensor([loss_sum, float(correct), float(seen)],
                                 dtype=wick.float64).to(self.device)
            wick.distributed.all_reduce(totals)
            loss_sum, correct, seen = totals.cpu().tolist()
        seconds = time.perf_counter() - start
        result = {"loss": loss_sum / seen, "accuracy": correct / seen, "seconds": seconds,
                  "samples_per_second": seen / seconds}
        bar.finish(f"loss {result['loss']:.4f}  acc {100 * result['accuracy']:5.1f}%  "
                   f"{result['samples_per_second']:6.0f} samples/s")
        return result

    @wick.no_grad()
    def evaluate(self, model, loader):
        model.eval()
        loss_sum, correct, seen = 0.0, 0, 0
        for images, labels in loader:
            images, labels = images.to(self.device), labels.to(self.device)
            logits = model(images)
            loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += (logits.argmax(1) == labels).sum().item()
            seen += labels.shape[0]
        return {"loss": loss_sum / seen, "accuracy": correct / seen}

    def fit(self, model, optimizer, scheduler, train_loader, test_loader, model_name):
        """Resumes from --resume, wraps the model in DDP under --ddp, trains --epochs epochs,
        evaluates after each, writes the CSV, the chart and --save's checkpoints, and ends with
        the summary (and the JSON line under --json)."""
        args = self.args
        first_epoch = 1
        if args.resume:
            first_epoch = self.resume(args.resume, model, optimizer, scheduler) + 1
        parameters = sum(p.numel() for p in model.parameters())
        self.say(f"{model}\n{parameters} parameters; {len(train_loader.dataset)} training and "
                 f"{len(test_loader.dataset)} test examples; {args.workers} workers"
                 + (f"; {self.world} ranks, batch {args.batch_size} each" if args.ddp else ""))
        trained = nn.parallel.DistributedDataParallel(model) if args.ddp else model
        chart = os.path.splitext(args.metrics)[0] + ".svg"
        os.makedirs(os.path.dirname(os.path.abspath(args.metrics)), exist_ok=True)
        columns = ["epoch", "train_loss", "train_accuracy", "test_loss", "test_accuracy",
                   "samples_per_second", "seconds", "loader_wait_seconds", "loss_scale",
                   "skipped_steps", "lr"]
        loss_curve, train_accuracy, test_accuracy = [], [], []
        start = time.perf_counter()
        total_samples, total_seconds, total_wait = 0.0, 1e-9, 0.0
        test = {"accuracy": 0.0}
        with open(args.metrics if self.rank == 0 else os.devnull, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(columns)
            last_epoch = args.epochs
            if args.stop_after_epoch > 0:
                last_epoch = min(last_epoch, args.stop_after_epoch)
            for epoch in range(first_epoch, last_epoch + 1):
                train_loader.set_epoch(epoch - 1)  # the order depends only on (seed, epoch)
                lr = optimizer.param_groups[0]["lr"]
                if self.loader_timeline is not None:
                    self.loader_timeline.clear()  # t = 0 at this epoch's start
                train = self.train_epoch(trained, optimizer, scheduler, train_loader, epoch,
                                         loss_curve)
                self.finish_loader_timeline(epoch)
                stats = train_loader.stats()
                wait = stats["epoch"]["wait_seconds"] if stats else 0.0
                test = self.evaluate(model, test_loader)
                self.say(f"  test: loss {test['loss']:.4f}  accuracy "
                         f"{100 * test['accuracy']:.2f}%  (loader wait {wait:.2f} s of "
                         f"{train['seconds']:.2f} s)")
                writer.writerow([epoch, f"{train['loss']:.6g}", f"{train['accuracy']:.6g}",
                                 f"{test['loss']:.6g}", f"{test['accuracy']:.6g}",
                                 f"{train['samples_per_second']:.6g}", f"{train['seconds']:.6g}",
                                 f"{wait:.6g}", f"{self.scaler.get_scale():.6g}",
                                 self.scaler.skipped_steps, f"{lr:.6g}"])
                f.flush()
                train_accuracy.append((epoch, 100 * train["accuracy"]))
                test_accuracy.append((epoch, 100 * test["accuracy"]))
                if self.rank == 0:
                    write_chart(chart, f"{self.program} --model {model_name}",
                                [("loss", [("training loss (per batch)", loss_curve)]),
                                 ("accuracy (%)", [("train accuracy", train_accuracy),
                                                   ("test accuracy", test_accuracy)])],
                                "epoch")
                total_samples += train["samples_per_second"] * train["seconds"]
                total_seconds += train["seconds"]
                total_wait += wait
                if args.save and self.rank == 0:
                    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                  "epoch": epoch}
                    if scheduler:
                        checkpoint["scheduler"] = scheduler.state_dict()
                    if self.scaler.is_enabled():
                        checkpoint["scaler"] = self.scaler.state_dict()
                    wick.save(checkpoint, args.save)
        seconds = time.perf_counter() - start
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.say(f"summary: {model_name}, {args.epochs} epochs, test accuracy "
                 f"{100 * test['accuracy']:.2f}%, {seconds:.1f} s "
                 f"({total_samples / total_seconds:.0f} training samples/s, loader wait "
                 f"{total_wait:.2f} s), peak RSS {peak_mib:.1f} MiB")
        self.say(f"metrics: {args.metrics} (chart: {chart})")
        if args.ddp:
            wick.distributed.destroy_process_group()
        if args.json and self.rank == 0:
            print(json.dumps({"framework": "wick-python", "model": model_name,
                              "samples_per_second": round(total_samples / total_seconds, 1),
                              "threads": wick.get_num_threads(), "peak_rss_mib": round(peak_mib, 1),
                              "test_accuracy": round(test["accuracy"], 4)}))
