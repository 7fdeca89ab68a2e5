#!/usr/bin/env bash
# The main demo: installs what is missing, builds, and trains a small network with autograd.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/examples/fit_spirals "$@"
