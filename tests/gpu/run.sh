#!/usr/bin/env bash
# Everything that needs a GPU, in one command on a GPU machine with only this repository:
# builds wick for sm_90, runs the GPU tests (each CUDA op and layer against the CPU, the caching
# allocator on the real device), the CPU test suite, the GPU benchmarks (GEMM against cuBLAS,
# allocation against cudaMalloc, convolution, MNIST CNN throughput), and prints a summary.
#
#   bash tests/gpu/run.sh                  # build into build-gpu/ and run everything
#   QUICK=1 bash tests/gpu/run.sh          # shorter benchmarks
#   WICK_CUDA_ARCHS="80;90" BUILD_DIR=b bash tests/gpu/run.sh
#
# Exits non-zero if the build or any test fails; logs are in $BUILD_DIR/gpu-logs/.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build-gpu}
archs=${WICK_CUDA_ARCHS:-90}
logs=$build/gpu-logs
mkdir -p "$logs"
export PATH="/usr/local/cuda/bin:$PATH"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1  # reuse compiler-cache entries of other builds
start=$(date +%s)
summary=()
failed=0

note() { summary+=("$1"); }

# Runs a step, keeping its output in $logs/<name>.log and its last lines on the screen.
run_step() {
  local name=$1
  shift
  echo "== $name: $*"
  if "$@" >"$logs/$name.log" 2>&1; then
    tail -n 5 "$logs/$name.log"
    return 0
  fi
  tail -n 40 "$logs/$name.log"
  return 1
}

echo "== machine"
nvidia-smi -L 2>/dev/null || echo "nvidia-smi not found (no NVIDIA driver?)"
for tool in nvcc cmake g++; do
  command -v $tool >/dev/null || { echo "run.sh: $tool not found; install the CUDA toolkit and a C++ toolchain"; exit 1; }
done
nvcc --version | tail -n 1

# Debian packages the build needs (skipped when all are present; needs network otherwise).
if ! bash scripts/setup.sh >"$logs/setup.log" 2>&1; then
  echo "run.sh: scripts/setup.sh could not install the build dependencies:"
  tail -n 20 "$logs/setup.log"
fi

benchmarks=ON
cmake_args=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DWICK_CUDA=ON "-DWICK_CUDA_ARCHS=$archs"
            -DWICK_TESTS=ON -DWICK_EXAMPLES=ON)
if ! run_step configure cmake "${cmake_args[@]}" -DWICK_BENCHMARKS=ON; then
  echo "run.sh: configuring with benchmarks failed (Google Benchmark missing?); trying without"
  benchmarks=OFF
  run_step configure cmake "${cmake_args[@]}" -DWICK_BENCHMARKS=OFF || exit 1
fi
targets=(wick_gpu_tests bench_gpu wick_tests train_mnist)
[ "$benchmarks" = ON ] && targets+=(bench_allocator bench_amp)
# The Python extension, when pybind11 was found (WICK_PYTHON defaults on then).
python=OFF
grep -q "WICK_PYTHON:BOOL=ON" "$build/CMakeCache.txt" && python=ON && targets+=(_C)
build_start=$(date +%s)
if ! run_step build cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"; then
  echo "run.sh: the build failed"
  exit 1
fi
note "build (sm_$archs, $(nproc) cores): $(( $(date +%s) - build_start )) s"

if run_step gpu_tests "$build/tests/gpu/wick_gpu_tests"; then
  note "GPU tests: $(grep -E '^\[  PASSED  \]' "$logs/gpu_tests.log") $(grep -E '^\[  SKIPPED \] [0-9]+ test' "$logs/gpu_tests.log" || true)"
else
  failed=1
  note "GPU tests: FAILED - $(grep -E '^\[  FAILED  \] [A-Za-z]' "$logs/gpu_tests.log" | tr '\n' ' ')"
fi
if grep -q "needs a CUDA device" "$logs/gpu_tests.log"; then
  note "WARNING: GPU tests were skipped: $(grep -m1 'needs a CUDA device' "$logs/gpu_tests.log")"
  failed=1
fi

if run_step cpu_tests "$build/tests/wick_tests"; then
  note "CPU tests: $(grep -E '^\[  PASSED  \]' "$logs/cpu_tests.log")"
else
  failed=1
  note "CPU tests: FAILED - $(grep -E '^\[  FAILED  \] [A-Za-z]' "$logs/cpu_tests.log" | tr '\n' ' ')"
fi

if run_step bench_gpu "$build/tests/gpu/bench_gpu" ${QUICK:+--quick}; then
  while IFS= read -r line; do note "${line#SUMMARY }"; done < <(grep '^SUMMARY' "$logs/bench_gpu.log")
else
  note "bench_gpu: FAILED (see $logs/bench_gpu.log)"
fi

if [ "$benchmarks" = ON ] &&
   run_step bench_allocator "$build/benchmarks/bench_allocator" \
     --benchmark_filter='^(caching|malloc|cuda_caching|cudaMalloc)/'; then
  note "allocator medians (ns per alloc+free):"
  while IFS= read -r line; do note "  $line"; done < <(sed -n '/^median ns/,$p' "$logs/bench_allocator.log" | tail -n +2)
fi

# Mixed precision on the GPU: fp32 against bf16 and fp16 autocast (issue: mixed precision).
if [ "$benchmarks" = ON ] && run_step bench_amp "$build/benchmarks/bench_amp" --device cuda; then
  note "bench_amp --device cuda (samples/s, peak MiB):"
  while IFS= read -r line; do note "  $line"; done < <(grep -E '^(cnn|wide_mlp|mlp) ' "$logs/bench_amp.log")
fi

# The Python package on the GPU: wick.cuda, .cuda(), streams, memory statistics.
if [ "$python" = ON ]; then
  if run_step python_cuda env WICK_BUILD_DIR="$build" /usr/bin/python3 -m pytest -q \
       -p no:cacheprovider tests/python/test_cuda.py tests/python/test_amp.py; then
    note "Python CUDA tests: $(tail -n 1 "$logs/python_cuda.log")"
  else
    failed=1
    note "Python CUDA tests: FAILED - $(tail -n 1 "$logs/python_cuda.log")"
  fi
fi

# MNIST on the GPU, when the example can be told to use it.
mnist="$build/examples/train_mnist"
if [ -x "$mnist" ] && "$mnist" --help 2>&1 | grep -q -- "--device"; then
  if run_step mnist "$mnist" --model cnn --epochs 1 --device cuda; then
    note "train_mnist --device cuda: $(grep -m1 '^summary' "$logs/mnist.log")"
  else
    note "train_mnist --device cuda: FAILED (see $logs/mnist.log)"
  fi
else
  note "train_mnist has no --device flag in this build; the MNIST CNN figure above is bench_gpu's"
fi

echo
echo "================================ summary ================================"
for line in "${summary[@]}"; do echo "$line"; done
echo "total: $(( $(date +%s) - start )) s; logs in $logs/"
exit $failed
