"""wick against PyTorch on the same MNIST training job, in one run.

Trains the MLP and the CNN of examples/train_mnist.cpp for one epoch on the committed 8,000
training digits - batch size 64, Adam with lr 1e-3, the same normalisation - first with wick's
C++ example, then with PyTorch (benchmarks/torch_mnist.py), each in its own process with the
same number of threads, and prints training samples/s, the ratio, and each one's peak memory.
When `scripts/setup.sh --bench` has installed a current PyTorch 2.x in .venv-bench, the same
script runs under it too, as a second reference.

    bash scripts/build.sh && /usr/bin/python3 benchmarks/mnist_vs_pytorch.py [--epochs 1]
"""

import argparse
import json
import os
import subprocess
import sys

import bench_common  # first: it may re-execute the script with OPENBLAS_CORETYPE set
from bench_common import current_torch_python, openblas_corename

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def last_json_line(output):
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError("no result line in:\n" + output)


def run(command):
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")
    return last_json_line(result.stdout)


def main():
    # PyTorch 1.13's matmuls and convolutions run through OpenBLAS: give its process (which
    # inherits the environment) this processor's kernel when OpenBLAS's detection falls back.
    bench_common.use_openblas_kernel()
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--models", default="mlp,cnn")
    args = parser.parse_args()
    binary = os.path.join(ROOT, "build", "examples", "train_mnist")
    if not os.path.exists(binary):
        sys.exit("build wick first: bash scripts/build.sh")
    newer = current_torch_python()
    if not newer:
        print("PyTorch 2.x: not installed (bash scripts/setup.sh --bench adds it)")
    torch_script = os.path.join(ROOT, "benchmarks", "torch_mnist.py")
    rows = []
    for model in args.models.split(","):
        common = ["--model", model, "--epochs", str(args.epochs), "--threads", str(args.threads)]
        wick = run([binary, *common, "--workers", "2", "--json", "1",
                    "--metrics", "/tmp/wick_bench_metrics.csv"])
        references = [run([sys.executable, torch_script, *common])]
        if newer:
            references.append(run([newer, torch_script, *common]))
        rows.append((model, wick, references))
        print(f"{model}: wick {wick['samples_per_second']:.0f} samples/s, "
              + ", ".join(f"{t['framework']} {t['samples_per_second']:.0f}" for t in references),
              flush=True)

    print(f"\nMNIST training, batch 64, Adam lr 1e-3, {args.epochs} epoch(s) of 8,000 digits, "
          f"{args.threads} threads; OpenBLAS core {openblas_corename()} "
          f"(OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}); ratio = wick's samples/s "
          "over the reference's")
    for model, w, references in rows:
        print(f"{model:6} wick {w['samples_per_second']:.0f} samples/s, "
              f"peak RSS {w['peak_rss_mib']:.0f} MiB (+{w['rss_growth_mib']:.0f} training), "
              f"test accuracy {100 * w['test_accuracy']:.2f}%")
        for t in references:
            ratio = w["samples_per_second"] / t["samples_per_second"]
            print(f"{'':6} {t['framework']:>22} {t['samples_per_second']:.0f} samples/s: "
                  f"{ratio:.2f}x, peak RSS {t['peak_rss_mib']:.0f} MiB "
                  f"(+{t['rss_growth_mib']:.0f}), test accuracy {100 * t['test_accuracy']:.2f}%")
    tensors = ", ".join(f"{w['peak_tensor_mib']:.0f} MiB ({m})" for m, w, _ in rows)
    print("(peak RSS includes each runtime's own libraries; the growth is what training added. "
          f"wick's own tensors peaked at {tensors}.)")


if __name__ == "__main__":
    main()
