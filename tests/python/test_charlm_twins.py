"""examples/train_charlm.{cpp,py} are one program twice: with one seed they build the same
weights, draw the same batches and so report the same losses to 3 decimals (no closer: the two
differ in the order of a few floating-point sums). Also: both refuse bad flags with
one line and exit status 2, and a short run beats nothing but still writes its CSV and chart."""

import csv
import os
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

CPP = os.path.join(BUILD, "examples", "train_charlm")
PY = os.path.join(ROOT, "examples", "train_charlm.py")
SMALL = ["--epochs", "2", "--steps", "6", "--batch-size", "8", "--context", "16", "--d-model",
         "32", "--heads", "2", "--layers", "1", "--sample", "16"]

needs_cpp = pytest.mark.skipif(not os.path.exists(CPP), reason=f"{CPP} is not built")


def run(program, args, tmp_path, tag):
    metrics = str(tmp_path / f"{tag}.csv")
    command = [CPP] if program == "cpp" else [sys.executable, PY]
    command += args + ["--metrics", metrics]
    if program == "py":
        command += ["--chart", str(tmp_path / f"{tag}.svg")]
    env = dict(os.environ, WICK_BUILD_DIR=BUILD, OMP_NUM_THREADS="2")
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    return done, metrics


@needs_cpp
@pytest.mark.parametrize("model", ["transformer", "lstm"])
def test_same_seed_same_losses(tmp_path, model):
    rows = {}
    for program in ("cpp", "py"):
        done, metrics = run(program, SMALL + ["--model", model, "--seed", "3"], tmp_path, program)
        assert done.returncode == 0, done.stderr
        assert "summary:" in done.stdout
        with open(metrics) as f:
            rows[program] = list(csv.DictReader(f))
        assert os.path.getsize(os.path.splitext(metrics)[0] + ".svg") > 0
    assert len(rows["cpp"]) == len(rows["py"]) == 2
    for cpp, py in zip(rows["cpp"], rows["py"]):
        for column in ("train_loss", "val_loss", "unigram_loss"):
            assert abs(float(cpp[column]) - float(py[column])) < 5e-4, (column, cpp, py)


@needs_cpp
def test_a_different_seed_gives_a_different_run(tmp_path):
    losses = []
    for seed in ("0", "1"):
        done, metrics = run("cpp", SMALL + ["--epochs", "1", "--seed", seed], tmp_path, seed)
        assert done.returncode == 0, done.stderr
        with open(metrics) as f:
            losses.append(float(next(csv.DictReader(f))["train_loss"]))
    assert abs(losses[0] - losses[1]) > 1e-4


@needs_cpp
@pytest.mark.parametrize("program", ["cpp", "py"])
@pytest.mark.parametrize("args,message", [
    (["--model", "gru"], "--model"),
    (["--steps", "0"], "--steps"),
    (["--text", "/nonexistent/book.txt"], "/nonexistent/book.txt"),
])
def test_bad_flags_end_with_one_line(tmp_path, program, args, message):
    done, _ = run(program, SMALL + args, tmp_path, "bad")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr
    assert "Traceback" not in done.stderr
