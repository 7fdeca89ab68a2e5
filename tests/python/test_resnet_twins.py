"""examples/train_resnet.{cpp,py} are one program twice, and train_mnist.{cpp,py} share their loop
(examples/common/trainer.cpp, training.py): with one seed the twins build the same weights, load
the same batches with the same random crops and print the same losses. Also: a resumed run
repeats an uninterrupted one, the CSV and the chart are written, and bad flags or data end with
one line and exit status 2. Short runs (--steps-per-epoch) keep this quick; the full 3-epoch
accuracy is measured by running the programs (the README reports it)."""

import csv
import os
import struct
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

SHORT = ["--epochs", "2", "--steps-per-epoch", "6", "--batch-size", "16", "--workers", "1"]


def binary(name):
    return os.path.join(BUILD, "examples", name)


def command(program, language):
    if language == "cpp":
        return [binary(program)]
    return [sys.executable, os.path.join(ROOT, "examples", program + ".py")]


def run(program, language, args, tmp_path, tag):
    metrics = str(tmp_path / f"{tag}.csv")
    env = dict(os.environ, WICK_BUILD_DIR=BUILD, OMP_NUM_THREADS="2")
    done = subprocess.run(command(program, language) + args + ["--metrics", metrics],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    rows = []
    if os.path.exists(metrics):
        with open(metrics) as f:
            rows = list(csv.DictReader(f))
    return done, rows


def needs(program):
    return pytest.mark.skipif(not os.path.exists(binary(program)),
                              reason=f"{binary(program)} is not built")


@needs("train_resnet")
@needs("train_mnist")
@pytest.mark.parametrize("program,args", [
    ("train_resnet", ["--seed", "3"]),
    ("train_mnist", ["--model", "cnn", "--seed", "3"]),
])
def test_same_seed_same_losses(tmp_path, program, args):
    rows = {}
    for language in ("cpp", "py"):
        done, rows[language] = run(program, language, SHORT + args, tmp_path, language)
        assert done.returncode == 0, done.stderr
        assert "summary:" in done.stdout
        assert os.path.getsize(tmp_path / f"{language}.svg") > 0
    assert len(rows["cpp"]) == len(rows["py"]) == 2
    for cpp, py in zip(rows["cpp"], rows["py"]):
        for column in ("train_loss", "test_loss", "lr"):
            assert abs(float(cpp[column]) - float(py[column])) < 5e-4, (column, cpp, py)
        assert cpp["test_accuracy"] == py["test_accuracy"]


@needs("train_resnet")
@pytest.mark.parametrize("language", ["cpp", "py"])
def test_resume_repeats_the_uninterrupted_run(tmp_path, language):
    checkpoint = str(tmp_path / "ckpt.safetensors")
    done, straight = run("train_resnet", language, SHORT, tmp_path, "straight")
    assert done.returncode == 0, done.stderr
    # The schedule spans --epochs, so the interrupted run keeps --epochs 2 and stops after 1.
    first = SHORT + ["--stop-after-epoch", "1", "--save", checkpoint]
    done, _ = run("train_resnet", language, first, tmp_path, "first")
    assert done.returncode == 0, done.stderr
    done, resumed = run("train_resnet", language, SHORT + ["--resume", checkpoint], tmp_path,
                        "resumed")
    assert done.returncode == 0, done.stderr
    assert "resumed from" in done.stdout
    keys = ("train_loss", "train_accuracy", "test_loss", "test_accuracy", "lr")
    assert [resumed[0][k] for k in keys] == [straight[1][k] for k in keys]


def write_cifar(folder, records):
    """A tiny CIFAR-10 set in the binary format: label byte, then 3 x 32 x 32 pixel bytes."""
    folder.mkdir()
    for name in ["data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
                 "data_batch_5.bin", "test_batch.bin"]:
        with open(folder / name, "wb") as f:
            for i in range(records):
                f.write(struct.pack("B", i % 10) + bytes((i * 7 + j) % 256 for j in range(3072)))


@needs("train_resnet")
@pytest.mark.parametrize("language", ["cpp", "py"])
def test_trains_on_cifar10_files(tmp_path, language):
    write_cifar(tmp_path / "cifar", 8)
    done, rows = run("train_resnet", language,
                     ["--data", str(tmp_path / "cifar"), "--epochs", "1", "--batch-size", "8",
                      "--workers", "0"], tmp_path, "cifar")
    assert done.returncode == 0, done.stderr
    assert "CIFAR-10 images" in done.stdout
    assert "40 training and 8 test examples" in done.stdout
    assert len(rows) == 1 and 0 <= float(rows[0]["test_accuracy"]) <= 1


@needs("train_resnet")
@pytest.mark.parametrize("language", ["cpp", "py"])
@pytest.mark.parametrize("args,message", [
    (["--model", "resnet18"], "resnet18"),
    (["--data", "/nonexistent"], "nonexistent"),
    (["--epochs", "0"], "--epochs and --batch-size must be positive"),
    (["--amp", "fp8"], "fp8"),
])
def test_bad_flags_fail_with_one_line(tmp_path, language, args, message):
    done, _ = run("train_resnet", language, args, tmp_path, "bad")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert message in done.stderr, done.stderr
    assert language == "py" or len(lines) == 1, done.stderr
