#!/usr/bin/env bash
# The main demo: installs what is missing, builds, and trains the classic CNN on the committed
# MNIST digits for 3 epochs (about half a minute on 2 cores). Extra arguments go to train_mnist,
# e.g. `bash scripts/demo.sh --model mlp`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/examples/train_mnist --model cnn --epochs 3 "$@"
