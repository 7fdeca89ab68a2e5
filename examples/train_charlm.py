"""Trains a small character-level language model on The Devil's Dictionary (assets/text) and
prints, each epoch, the training and validation loss, the perplexity and a generated sample: a
decoder-only Transformer (causal self-attention) by default, or an LSTM (--model lstm).

    /usr/bin/python3 examples/train_charlm.py                 # Transformer, 3 epochs
    /usr/bin/python3 examples/train_charlm.py --model lstm

examples/train_charlm.cpp is the same program in C++: with one --seed both report the same
losses (tests/python/test_charlm_twins.py). It is a plain PyTorch script written against wick:
change the imports to `import torch as wick` and `from torch import nn` and it runs on PyTorch
(benchmarks/bench_charlm.py does exactly that, to compare tokens/s on the same model). The
validation loss is set beside a unigram baseline (the loss of predicting every character from its
frequency in the training text), so what the model learned beyond letter frequencies is visible.
Every epoch appends a row to the metrics CSV and redraws an SVG chart of the curves.
"""

import argparse
import csv
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):  # run from a source tree after scripts/build.sh
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]

import wick  # noqa: E402
import wick.nn.functional as F  # noqa: E402
from wick import nn  # noqa: E402

from charlm_chart import write_chart  # noqa: E402
from common.training import ProgressBar  # noqa: E402

TEXT = os.path.join(ROOT, "assets", "text", "devils_dictionary.txt")


class TransformerLM(nn.Module):
    """token + position embeddings, pre-norm Transformer encoder layers under a causal mask,
    a final layer norm and a linear read-out to the vocabulary"""

    def __init__(self, vocab, context, d_model, heads, layers):
        super().__init__()
        self.token = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        steps = tokens.shape[1]
        x = self.token(tokens) + self.position(wick.arange(steps, device=tokens.device))
        # -inf above the diagonal: position t attends to positions <= t only.
        causal = wick.full((steps, steps), float("-inf"), device=tokens.device).triu(1)
        return self.head(self.norm(self.blocks(x, mask=causal)))


class LSTMLM(nn.Module):
    """token embeddings, a multi-layer LSTM and a linear read-out to the vocabulary"""

    def __init__(self, vocab, d_model, layers):
        super().__init__()
        self.token = nn.Embedding(vocab, d_model)
        self.lstm = nn.LSTM(d_model, d_model, layers, batch_first=True)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        out, _ = self.lstm(self.token(tokens))
        return self.head(out)


def load_text(path, holdout=0.1):
    text = open(path, encoding="ascii").read()
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    data = wick.tensor([index[c] for c in text], dtype=wick.int64)
    split = int(len(text) * (1 - holdout))
    return vocab, data[:split], data[split:]


def unigram_loss(train, val, vocab_size):
    """The loss of predicting each validation character by its training frequency (add-one)."""
    counts = wick.bincount(train, minlength=vocab_size).double() + 1.0
    log_p = (counts / counts.sum()).log()
    return -log_p[val].mean().item()


def random_batch(data, batch, context):
    starts = wick.randint(0, len(data) - context - 1, (batch,))
    offsets = wick.arange(context + 1)
    windows = data[starts[:, None] + offsets[None, :]]
    return windows[:, :-1], windows[:, 1:]


def evaluate(model, data, batch, context, device):
    """The mean loss over evenly spaced windows covering the data once (the same every epoch)."""
    model.eval()
    starts = wick.arange(0, len(data) - context - 1, context)
    offsets = wick.arange(context + 1)
    total, count = 0.0, 0
    with wick.no_grad():
        for i in range(0, len(starts), batch):
            windows = data[starts[i:i + batch, None] + offsets[None, :]].to(device)
            logits = model(windows[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                   windows[:, 1:].reshape(-1), reduction="sum")
            total += loss.item()
            count += windows[:, 1:].numel()
    model.train()
    return total / count


def generate(model, vocab, context, length, temperature, device, prompt="\n"):
    index = {c: i for i, c in enumerate(vocab)}
    tokens = [index[c] for c in prompt]
    model.eval()
    with wick.no_grad():
        for _ in range(length):
            window = wick.tensor([tokens[-context:]], dtype=wick.int64, device=device)
            logits = model(window)[0, -1] / temperature
            probs = logits.softmax(-1).cpu()
            tokens.append(int(wick.multinomial(probs, 1).item()))
    model.train()
    return "".join(vocab[t] for t in tokens[len(prompt):])


def main():
    parser = argparse.ArgumentParser(description="Train a character-level language model on The "
                                                 "Devil's Dictionary with wick, from Python.")
    parser.add_argument("--model", default="transformer", choices=["transformer", "lstm"])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=150, help="training steps per epoch")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=64, help="characters per sequence")
    parser.add_argument("--d-model", type=int, default=96)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=240, help="characters generated per epoch")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--text", default=TEXT, help="an ASCII text file to learn")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--metrics", default="runs/charlm_metrics_py.csv")
    parser.add_argument("--chart", default="runs/charlm_py.svg")
    args = parser.parse_args()
    # parser.error: one line and exit status 2, as the C++ twin ends on a bad argument.
    for name in ("epochs", "steps", "batch_size", "context", "d_model", "layers"):
        if getattr(args, name) <= 0:
            parser.error(f"[train_charlm] --{name.replace('_', '-')} must be positive")
    if not os.path.isfile(args.text):
        parser.error(f"[train_charlm] cannot read --text {args.text}")
    if args.device == "cuda" and not wick.cuda.is_available():
        raise SystemExit("[train_charlm] --device cuda: no CUDA device is available")

    wick.manual_seed(args.seed)
    device = wick.device(args.device)
    vocab, train, val = load_text(args.text)
    if len(val) <= args.context + 1:
        raise SystemExit(f"[train_charlm] {args.text} is too short for --context {args.context}")
    if args.model == "transformer":
        model = TransformerLM(len(vocab), args.context, args.d_model, args.heads, args.layers)
    else:
        model = LSTMLM(len(vocab), args.d_model, args.layers)
    model = model.to(device)
    optimizer = wick.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    total_steps = args.epochs * args.steps
    schedule = wick.optim.lr_scheduler.CosineAnnealingLR(optimizer, total_steps)
    baseline = unigram_loss(train, val, len(vocab))
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{model}\n{parameters} parameters; {len(train)} training and {len(val)} validation "
          f"characters, vocabulary {len(vocab)}; unigram baseline loss {baseline:.4f}")

    os.makedirs(os.path.dirname(os.path.abspath(args.metrics)), exist_ok=True)
    history = []
    start = time.perf_counter()
    tokens_seen, train_seconds = 0, 0.0
    with open(args.metrics, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["epoch", "train_loss", "val_loss", "val_perplexity",
                         "unigram_loss", "tokens_per_second", "seconds"])
        for epoch in range(1, args.epochs + 1):
            bar = ProgressBar(f"epoch {epoch}/{args.epochs}", args.steps)
            epoch_start, running = time.perf_counter(), 0.0
            for step in range(1, args.steps + 1):
                inputs, targets = random_batch(train, args.batch_size, args.context)
                inputs, targets = inputs.to(device), targets.to(device)
                logits = model(inputs)
                loss = F.cross_entropy(logits.reshape(-1, len(vocab)), targets.reshape(-1))
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                running += loss.item()
                bar.update(step, f"loss {running / step:.4f}")
            seconds = time.perf_counter() - epoch_start
            train_loss = running / args.steps
            bar.finish(f"loss {train_loss:.4f}")
            tokens = args.steps * args.batch_size * args.context
            tokens_seen, train_seconds = tokens_seen + tokens, train_seconds + seconds
            val_loss = evaluate(model, val, 64, args.context, device)
            print(f"  validation: loss {val_loss:.4f}  perplexity {math.exp(val_loss):.2f}  "
                  f"(unigram {baseline:.4f}; {tokens / seconds:.0f} tokens/s)")
            sample = generate(model, vocab, args.context, args.sample, args.temperature, device)
            print("  sample: " + sample.replace("\n", "\n          "))
            writer.writerow([epoch, f"{train_loss:.6g}", f"{val_loss:.6g}",
                             f"{math.exp(val_loss):.6g}", f"{baseline:.6g}",
                             f"{tokens / seconds:.6g}", f"{seconds:.6g}"])
            f.flush()
            history.append((epoch, train_loss, val_loss))
            write_chart(args.chart, f"{args.model} on The Devil's Dictionary", history, baseline)
    print(f"summary: {args.model}, {args.epochs} epochs, validation loss {history[-1][2]:.4f} "
          f"(unigram {baseline:.4f}), {tokens_seen / train_seconds:.0f} tokens/s, "
          f"{time.perf_counter() - start:.1f} s")
    print(f"metrics: {args.metrics}  chart: {args.chart}")


if __name__ == "__main__":
    main()
