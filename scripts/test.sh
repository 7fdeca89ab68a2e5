#!/usr/bin/env bash
# Runs every test: the formatting check, the GPU machine's offline build set, the C++ tests in the
# Release build, the Python tests (tests/python, and tests/gpu/python, which skip without a GPU)
# against that build, the C++ tests again under AddressSanitizer, UndefinedBehaviorSanitizer and
# LeakSanitizer, the threaded tests under ThreadSanitizer, and each libFuzzer harness for a short
# fixed time (docs/testing.md). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# Let ccache share results between clones in different folders (CI uses fresh clones).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
start=$(date +%s)
bash scripts/setup.sh
bash scripts/check_format.sh
/usr/bin/python3 scripts/check_layers.py
# The size of each layer, kept in view (README.md's table: scripts/line_counts.py --update-readme).
/usr/bin/python3 scripts/line_counts.py

echo "== the GPU machine's offline build set (tests/gpu/check_offline_set.sh)"
# Fetches the .debs (network to Debian's registry) and configures the CUDA build against them
# alone, system folders hidden: a package the bare GPU machine would lack fails here.
bash tests/gpu/check_offline_set.sh

echo "== build (Release) and tests"
# The multi-process tests (tests/distributed: ctest runs them through mpirun) need
# WICK_DISTRIBUTED, on by default once MPI is installed; a build/ configured before keeps it off.
if [ -f build/CMakeCache.txt ] && grep -q "WICK_DISTRIBUTED:BOOL=OFF" build/CMakeCache.txt; then
  cmake -S . -B build -DWICK_DISTRIBUTED=ON > /dev/null
fi
bash scripts/build.sh
ctest --test-dir build --output-on-failure

echo "== Python tests (pytest; compared against PyTorch where python3-torch is installed)"
# The extension is part of the Release build when pybind11 is found (WICK_PYTHON defaults ON);
# an older build/ configured without it is switched on here.
grep -q "WICK_PYTHON:BOOL=ON" build/CMakeCache.txt || cmake -S . -B build -DWICK_PYTHON=ON > /dev/null
cmake --build build -j "$(nproc)" --target _C
# .venv (scripts/setup.sh) is Debian's python3 plus what only PyPI has (hypothesis).
python=/usr/bin/python3
[ -x .venv/bin/python ] && python=.venv/bin/python
WICK_BUILD_DIR=build "$python" -m pytest -q -p no:cacheprovider tests/python tests/gpu/python

echo "== tutorials: every lab passes with its solution, every generated starter fails its tests"
WICK_BUILD_DIR=build bash tutorials/ci.sh

echo "== tests under ASan + UBSan"
# Without CUDA: there is no GPU to sanitize, and the CUDA kernels would only double nvcc's time.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DWICK_SANITIZE=ON -DWICK_CUDA=OFF -DWICK_PYTHON=OFF -DWICK_DISTRIBUTED=OFF -DWICK_BENCHMARKS=OFF \
  -DWICK_EXAMPLES=OFF > /dev/null
# With MPI, the multi-process tests (tests/distributed) run under the sanitizers too.
targets=(wick_tests wick_env_tests)
if grep -q "WICK_DISTRIBUTED:BOOL=ON" build-sanitize/CMakeCache.txt; then
  targets+=(wick_dist_tests failure_probe)
fi
cmake --build build-sanitize -j "$(nproc)" --target "${targets[@]}"
# LeakSanitizer is part of ASan and on by default on Linux; said here so that an ASAN_OPTIONS from
# the environment cannot turn it off unnoticed. A leak fails the test binary at exit. The host
# block cache is off (Note [host block cache]), so that ASan sees every free and poisons it.
WICK_HOST_CACHE_MB=0 ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-sanitize --output-on-failure

echo "== threaded tests under ThreadSanitizer"
# Its own build (TSan cannot be combined with ASan), CPU only, and only the test target of the
# threaded code (tests/CMakeLists.txt: wick_tsan_tests).
tsan_start=$(date +%s)
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DWICK_TSAN=ON \
  -DWICK_CUDA=OFF -DWICK_PYTHON=OFF -DWICK_DISTRIBUTED=OFF -DWICK_BENCHMARKS=OFF \
  -DWICK_EXAMPLES=OFF > /dev/null
cmake --build build-tsan -j "$(nproc)" --target wick_tsan_tests
ctest --test-dir build-tsan --output-on-failure -R tsan_tests
echo "tsan: $(( $(date +%s) - tsan_start )) s"

echo "== fuzzing: each parser's libFuzzer harness for 15 s under ASan + UBSan (tests/fuzz)"
fuzz_start=$(date +%s)
bash tests/fuzz/run.sh 15
echo "fuzz: $(( $(date +%s) - fuzz_start )) s"

echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
