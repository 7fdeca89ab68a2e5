"""--accumulate K in the training programs: K batches of B per optimizer step give the numbers of
batches of K * B (the same digits, the gradient a mean over them), in Python and in C++ alike;
a bad K exits 2 with one line. (Under DDP, no_sync: tests/distributed/test_train_mnist_ddp.sh.)"""

import csv
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
CPP = os.path.join(BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD), "examples",
                   "train_mnist")
COMMON = ["--model", "mlp", "--epochs", "1", "--seed", "3", "--workers", "0"]


def run(program, args, metrics):
    command = ([sys.executable, os.path.join(ROOT, "examples", "train_mnist.py")]
               if program == "python" else [CPP])
    env = dict(os.environ, WICK_BUILD_DIR=BUILD)
    out = subprocess.run(command + COMMON + args + ["--metrics", str(metrics)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    row = list(csv.reader(open(metrics)))[1]
    return row[1:5]  # train loss, train accuracy, test loss, test accuracy


def test_accumulate_equals_the_larger_batch(tmp_path):
    whole = run("python", ["--batch-size", "64"], tmp_path / "b64.csv")
    accumulated = run("python", ["--batch-size", "32", "--accumulate", "2"], tmp_path / "a.csv")
    assert accumulated == whole
    # An epoch of 250 batches of 32 with --accumulate 3 ends with a group of one: it still runs.
    run("python", ["--batch-size", "32", "--accumulate", "3"], tmp_path / "a3.csv")


@pytest.mark.skipif(not os.path.exists(CPP), reason="the C++ train_mnist is not built")
def test_the_twins_agree(tmp_path):
    args = ["--batch-size", "32", "--accumulate", "2"]
    assert run("python", args, tmp_path / "py.csv") == run("cpp", args, tmp_path / "cpp.csv")


def test_bad_accumulate_exits_2():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_mnist.py"),
                          "--accumulate", "0"], cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, WICK_BUILD_DIR=BUILD), timeout=120)
    assert out.returncode == 2 and "--accumulate must be at least 1; got 0" in out.stderr
