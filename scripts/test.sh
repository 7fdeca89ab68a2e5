#!/usr/bin/env bash
# Runs every test: the formatting check, the C++ tests in the Release build, the Python tests
# (tests/python) against that build, and the C++ tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# Let ccache share results between clones in different folders (CI uses fresh clones).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
start=$(date +%s)
bash scripts/setup.sh
bash scripts/check_format.sh

echo "== build (Release) and tests"
bash scripts/build.sh
ctest --test-dir build --output-on-failure

echo "== Python tests (pytest; compared against PyTorch where python3-torch is installed)"
# The extension is part of the Release build when pybind11 is found (WICK_PYTHON defaults ON);
# an older build/ configured without it is switched on here.
grep -q "WICK_PYTHON:BOOL=ON" build/CMakeCache.txt || cmake -S . -B build -DWICK_PYTHON=ON > /dev/null
cmake --build build -j "$(nproc)" --target _C
WICK_BUILD_DIR=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python

echo "== tests under ASan + UBSan"
# Without CUDA: there is no GPU to sanitize, and the CUDA kernels would only double nvcc's time.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DWICK_SANITIZE=ON -DWICK_CUDA=OFF -DWICK_PYTHON=OFF -DWICK_DISTRIBUTED=OFF -DWICK_BENCHMARKS=OFF \
  -DWICK_EXAMPLES=OFF > /dev/null
cmake --build build-sanitize -j "$(nproc)" --target wick_tests
ctest --test-dir build-sanitize --output-on-failure

echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
