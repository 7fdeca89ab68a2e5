#!/usr/bin/env bash
# Everything that needs a GPU, in one command on a bare GPU machine (no network, no Debian -dev
# packages) with only this repository: builds wick for sm_90, runs the GPU tests (each CUDA op and
# layer against the CPU, cuDNN and hand-written paths, the caching allocator on the real device,
# NCCL at world size 1), once more under compute-sanitizer, the Python GPU tests against PyTorch
# on the same device, the GPU benchmarks beside PyTorch, and writes a one-page summary.
#
#   bash tests/gpu/prepare.sh                  # first, on a networked machine (the offline set)
#   bash tests/gpu/run.sh --out gpu-run        # every log and summary.txt in gpu-run/
#   QUICK=1 bash tests/gpu/run.sh --out gpu-run  # no CPU suite, no sanitizer, short benchmarks
#   WICK_CUDA_ARCHS="80;90" BUILD_DIR=b bash tests/gpu/run.sh
#
# Exit status: 0 all passed, 1 a build or test failed, 2 no GPU here (said in one line, at once).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
root=$PWD
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)"; exit 1 ;;
  esac
done
build=${BUILD_DIR:-build-gpu}
archs=${WICK_CUDA_ARCHS:-90}
out=${out:-$build/gpu-logs}
quick=${QUICK:-}
set_dir=${OFFLINE_DIR:-tests/gpu/offline}
start=$(date +%s)

# ---- a GPU, or stop at once ----------------------------------------------------------------------
if ! command -v nvidia-smi >/dev/null; then
  echo "run.sh: no NVIDIA GPU on this machine (no nvidia-smi: no driver); nothing to run"
  exit 2
fi
if ! gpus=$(nvidia-smi -L 2>&1) || ! grep -q "^GPU " <<<"$gpus"; then
  echo "run.sh: no NVIDIA GPU on this machine (nvidia-smi -L: $(head -n 1 <<<"$gpus")); nothing to run"
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary=()
failed=0
note() { summary+=("$1"); }
write_summary() {
  {
    echo "wick GPU check $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
    for line in "${summary[@]}"; do echo "$line"; done
    echo "total: $(( $(date +%s) - start )) s; logs in $out/"
  } >"$out/summary.txt"
  echo
  echo "================================ summary ================================"
  cat "$out/summary.txt"
}
# run_step NAME LIMIT CMD...: output in $out/NAME.log, its tail on the screen, a time limit.
run_step() {
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*"
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then tail -n 3 "$out/$name.log"; else tail -n 30 "$out/$name.log"; fi
  [ $rc -eq 124 ] && echo "run.sh: $name ran past ${limit}s" | tee -a "$out/$name.log"
  return $rc
}
note "machine: $(head -n 1 <<<"$gpus"), $(nproc) cores, driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)"

# ---- toolchain -----------------------------------------------------------------------------------
export PATH="$PATH:/usr/local/cuda/bin"
for tool in nvcc cmake g++ python3; do
  command -v $tool >/dev/null || { note "missing: $tool (install the CUDA toolkit, CMake, g++)"; write_summary; exit 1; }
done
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
cuda_major=$(nvcc --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
py=$(command -v python3)
note "CUDA $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $($py --version 2>&1), torch $($py -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null || echo absent)"

# ---- build inputs: the system's, else the offline set unpacked into a prefix ---------------------
# shellcheck source=tests/gpu/offline.sh
source tests/gpu/offline.sh
have_header() {  # have_header FILE: found in the system's include folders
  [ -e "/usr/include/$1" ] || [ -e "/usr/local/include/$1" ]
}
cmake_args=()
sys_missing=()
have_header eigen3/Eigen/Core || sys_missing+=(eigen)
have_header nlohmann/json.hpp || sys_missing+=(nlohmann-json)
have_header gtest/gtest.h || sys_missing+=(gtest)
have_header benchmark/benchmark.h || sys_missing+=(benchmark)
have_header zlib.h || sys_missing+=(zlib)
have_header dlpack/dlpack.h || sys_missing+=(dlpack)
if [ ${#sys_missing[@]} -gt 0 ] || [ -d "$set_dir/wheels" ]; then
  if ls "$set_dir"/debs/*.deb >/dev/null 2>&1; then
    prefix=$root/$build/offline-prefix
    # Unpacked again when the set changed (prepare.sh rewrites its MANIFEST).
    if ! cmp -s "$set_dir/MANIFEST" "$prefix/MANIFEST"; then
      rm -rf "$prefix"
      offline_unpack "$set_dir" "$prefix"
      cp "$set_dir/MANIFEST" "$prefix/MANIFEST" 2>/dev/null
    fi
    mapfile -t cmake_args < <(offline_cmake_args "$set_dir" "$prefix")
    note "build inputs: offline set $set_dir unpacked into $prefix (system lacks: ${sys_missing[*]:-nothing})"
  else
    note "build inputs: system lacks ${sys_missing[*]} and there is no offline set (run tests/gpu/prepare.sh on a networked machine)"
  fi
fi

# cuDNN: CUDNN_ROOT, PyTorch's wheel, the CUDA toolkit. Headers: that folder's, the toolkit's, or
# the offline set's copy. Note [finding cuDNN] in cuda/CMakeLists.txt.
wheel_dir() {  # wheel_dir cudnn|nccl: site-packages/nvidia/<lib> of python3, if any
  $py -c "import nvidia.$1 as m, os; print(list(m.__path__)[0])" 2>/dev/null
}
find_lib() {  # find_lib DIR NAME: the library file NAME.so or NAME.so.N in DIR/lib or DIR/lib64
  ls "$1"/lib/"$2".so "$1"/lib/"$2".so.* "$1"/lib64/"$2".so "$1"/lib64/"$2".so.* 2>/dev/null | head -n 1
}
cuda_home=$(dirname "$(dirname "$(command -v nvcc)")")
cudnn_root=${CUDNN_ROOT:-$(wheel_dir cudnn)}
[ -n "$cudnn_root" ] && [ -n "$(find_lib "$cudnn_root" libcudnn)" ] || cudnn_root=$cuda_home
cudnn_lib=$(find_lib "$cudnn_root" libcudnn)
cudnn_inc=""
for d in "$cudnn_root/include" "$cuda_home/include" /usr/include "$set_dir/headers/cudnn/include"; do
  [ -f "$d/cudnn_version.h" ] && { cudnn_inc=$(cd "$d" && pwd); break; }
done
nccl_root=${NCCL_ROOT:-$(wheel_dir nccl)}
[ -n "$nccl_root" ] && [ -n "$(find_lib "$nccl_root" libnccl)" ] || nccl_root=$cuda_home
nccl_lib=$(find_lib "$nccl_root" libnccl)
nccl_inc=""
for d in "$nccl_root/include" "$cuda_home/include" /usr/include "$set_dir/headers/nccl/include"; do
  [ -f "$d/nccl.h" ] && { nccl_inc=$(cd "$d" && pwd); break; }
done
missing=()
[ -n "$cudnn_lib" ] || missing+=("libcudnn (set CUDNN_ROOT, or pip's nvidia-cudnn)")
[ -n "$cudnn_inc" ] || missing+=("cudnn.h (run tests/gpu/prepare.sh where cuDNN is installed)")
if [ -n "$cudnn_lib" ] && [ -n "$cudnn_inc" ]; then
  cmake_args+=("-DCUDNN_LIBRARY=$cudnn_lib" "-DCUDNN_INCLUDE_DIR=$cudnn_inc")
  LD_LIBRARY_PATH="$(dirname "$cudnn_lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
  # The cuDNN/CUDA major match, checked before building (cudnn_conv.cpp refuses a mismatch).
  header_major=$(sed -n 's/^#define CUDNN_MAJOR \([0-9]*\).*/\1/p' "$cudnn_inc/cudnn_version.h")
  read -r lib_version lib_cudart < <($py -c "import ctypes; l = ctypes.CDLL('$cudnn_lib'); print(l.cudnnGetVersion(), l.cudnnGetCudartVersion())" 2>/dev/null || echo "0 0")
  line="cuDNN: library $cudnn_lib ($lib_version, for CUDA $((lib_cudart / 1000))), headers $cudnn_inc (major $header_major)"
  if [ "$((lib_version / 10000))" != "$header_major" ] || [ "$((lib_cudart / 1000))" != "$cuda_major" ]; then
    line="$line - MISMATCH: cuDNN $((lib_version / 10000)) for CUDA $((lib_cudart / 1000)) cannot serve headers of cuDNN $header_major and CUDA $cuda_major; convolutions will be refused"
    failed=1
  fi
  note "$line"
fi
if [ -n "$nccl_lib" ] && [ -n "$nccl_inc" ]; then
  cmake_args+=("-DNCCL_LIBRARY=$nccl_lib" "-DNCCL_INCLUDE_DIR=$nccl_inc")
  LD_LIBRARY_PATH="$(dirname "$nccl_lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
  note "NCCL: $nccl_lib, headers $nccl_inc"
else
  note "NCCL: not found (library ${nccl_lib:-missing}, nccl.h ${nccl_inc:-missing}); the NCCL tests are not built"
fi
if ! $py -c "import pytest" 2>/dev/null; then
  if [ -n "${prefix:-}" ] && [ -d "$prefix/pylib" ]; then
    export PYTHONPATH="$prefix/pylib${PYTHONPATH:+:$PYTHONPATH}"
    note "pytest: from the offline set ($prefix/pylib)"
  else
    note "pytest: not installed and not in the offline set; the Python tests will fail to start"
  fi
fi
py_include=$($py -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
python=ON
if [ ! -f "$py_include/Python.h" ]; then
  python=OFF
  note "Python: no Python.h in $py_include (the interpreter's development headers); the Python tests are skipped"
elif ! $py -c "import numpy" 2>/dev/null; then
  python=OFF
  note "Python: $py has no numpy (wick's extension needs it); the Python tests are skipped"
fi
if [ ${#missing[@]} -gt 0 ]; then
  note "missing before building: ${missing[*]}"
  write_summary
  exit 1
fi

# ---- configure and build (sm_90, only what the check runs) ---------------------------------------
benchmarks=ON
base_args=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DWICK_CUDA=ON "-DWICK_CUDA_ARCHS=$archs"
           -DWICK_TESTS=ON -DWICK_EXAMPLES=ON "-DWICK_PYTHON=$python" "-DPython3_EXECUTABLE=$py"
           "${cmake_args[@]}")
if ! run_step configure 300 cmake "${base_args[@]}" -DWICK_BENCHMARKS=ON; then
  benchmarks=OFF
  if ! run_step configure 300 cmake "${base_args[@]}" -DWICK_BENCHMARKS=OFF; then
    note "configure: FAILED - $(grep -m1 -E 'Could NOT find|not found|Error' "$out/configure.log")"
    write_summary
    exit 1
  fi
  note "configure: without benchmarks (Google Benchmark not found)"
fi
targets=(wick_gpu_tests bench_gpu train_mnist)
[ -z "$quick" ] && targets+=(wick_tests)
nccl=OFF
grep -q "wick: NCCL backend" "$out/configure.log" && nccl=ON && targets+=(wick_gpu_nccl_tests)
[ "$benchmarks" = ON ] && targets+=(bench_allocator)
[ "$python" = ON ] && targets+=(_C)
build_start=$(date +%s)
if ! run_step build 900 cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"; then
  note "build: FAILED - $(grep -m1 -E 'error' "$out/build.log")"
  write_summary
  exit 1
fi
note "build (sm_$archs, $(nproc) cores, ${targets[*]}): $(( $(date +%s) - build_start )) s"

# ---- tests ---------------------------------------------------------------------------------------
gtest_line() {  # gtest_line NAME LOG: "NAME: passed N, skipped M" or the failures
  local passed skipped
  passed=$(grep -E '^\[  PASSED  \]' "$2" | grep -oE '[0-9]+' | head -n 1)
  skipped=$(grep -E '^\[  SKIPPED \] [0-9]+ test' "$2" | grep -oE '[0-9]+' | head -n 1)
  echo "$1: passed ${passed:-0}, skipped ${skipped:-0}"
}
gtest_step() {  # gtest_step NAME LIMIT BINARY [ARGS]
  local name=$1
  if run_step "$@"; then
    note "$(gtest_line "$name" "$out/$name.log")"
  else
    failed=1
    note "$name: FAILED - $(grep -E '^\[  FAILED  \] [A-Za-z]' "$out/$name.log" | head -n 8 | tr '\n' ' ')"
  fi
  if grep -q "needs a CUDA device" "$out/$name.log"; then
    failed=1
    note "  WARNING: skipped for want of a device: $(grep -m1 'needs a CUDA device' "$out/$name.log")"
  fi
}
gtest_step gpu_tests 300 "$build/tests/gpu/wick_gpu_tests"
[ "$nccl" = ON ] && gtest_step nccl_tests 120 "$build/tests/wick_gpu_nccl_tests"
if [ -z "$quick" ]; then
  if command -v compute-sanitizer >/dev/null; then
    # Every GPU test but the 2**31-element one (minutes under memcheck) and the out-of-memory one
    # (its failed cudaMalloc calls are on purpose, and memcheck counts them), then the NCCL tests.
    run_step sanitizer 240 compute-sanitizer --tool memcheck --error-exitcode 99 \
      --print-limit 20 "$build/tests/gpu/wick_gpu_tests" --gtest_brief=1 \
      --gtest_filter='-*OverTwoToTheThirtyOne*:*OutOfMemory*'
    rc=$?
    if [ "$nccl" = ON ]; then
      # NCCL probes its kernels with cudaFuncGetAttributes and gets "no kernel image" for the
      # architectures its build lacks (8 API errors inside libnccl on an H200, none from wick);
      # API errors are not reported here, memory errors still are.
      timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 --report-api-errors no \
        "$build/tests/wick_gpu_nccl_tests" --gtest_brief=1 >>"$out/sanitizer.log" 2>&1 || rc=$?
    fi
    errors=$(grep -E 'ERROR SUMMARY: [0-9]+' "$out/sanitizer.log" | tr '\n' ' ')
    if [ $rc -eq 0 ]; then note "compute-sanitizer memcheck: ${errors:-no ERROR SUMMARY line}"; else
      failed=1; note "compute-sanitizer memcheck: FAILED (exit $rc) - ${errors:-no ERROR SUMMARY line}"; fi
  else
    note "compute-sanitizer: not on this machine; GPU tests not sanitized"
  fi
  gtest_step cpu_tests 600 "$build/tests/wick_tests"
fi
if [ "$python" = ON ]; then
  if run_step python_gpu 600 env WICK_BUILD_DIR="$build" "$py" -m pytest -q -p no:cacheprovider \
       tests/gpu/python tests/python/test_cuda.py tests/python/test_amp.py; then
    note "Python GPU tests (wick vs PyTorch CUDA): $(tail -n 1 "$out/python_gpu.log")"
  else
    failed=1
    note "Python GPU tests: FAILED - $(grep -E '^FAILED' "$out/python_gpu.log" | head -n 6 | tr '\n' ' ')$(tail -n 1 "$out/python_gpu.log")"
  fi
fi

# ---- benchmarks ----------------------------------------------------------------------------------
if run_step bench_gpu 300 "$build/tests/gpu/bench_gpu" ${quick:+--quick}; then
  while IFS= read -r line; do note "${line#SUMMARY }"; done < <(grep '^SUMMARY' "$out/bench_gpu.log")
else
  note "bench_gpu: FAILED (see bench_gpu.log)"
fi
if [ "$python" = ON ]; then
  if run_step bench_vs_torch 420 env WICK_BUILD_DIR="$build" "$py" tests/gpu/bench_vs_torch.py \
       ${quick:+--quick}; then
    note "beside PyTorch on this GPU (wick / torch):"
    while IFS= read -r line; do note "  ${line#SUMMARY }"; done < <(grep '^SUMMARY' "$out/bench_vs_torch.log")
  else
    note "bench_vs_torch: FAILED (see bench_vs_torch.log)"
  fi
fi
compile_steps=200
[ -n "$quick" ] && compile_steps=50
if [ "$python" = ON ]; then
  if run_step bench_compile 240 env WICK_BUILD_DIR="$build" "$py" tests/gpu/bench_compile.py \
       --steps "$compile_steps"; then
    note "eager against compiled (CUDA Graphs), ms per step:"
    while IFS= read -r line; do note "  ${line#SUMMARY }"; done < <(grep '^SUMMARY' "$out/bench_compile.log")
  else
    note "bench_compile: FAILED (see bench_compile.log)"
  fi
fi
if [ "$benchmarks" = ON ] && [ -z "$quick" ] &&
   run_step bench_allocator 120 "$build/benchmarks/bench_allocator" \
     --benchmark_filter='^(caching|cuda_caching|cudaMalloc)/'; then
  note "allocator medians (ns per alloc+free, C++):"
  while IFS= read -r line; do note "  $line"; done < <(sed -n '/^median ns/,$p' "$out/bench_allocator.log" | tail -n +2)
fi
if run_step mnist 300 "$build/examples/train_mnist" --model cnn --epochs 1 --device cuda; then
  note "train_mnist --device cuda: $(grep -m1 '^summary' "$out/mnist.log")"
else
  failed=1
  note "train_mnist --device cuda: FAILED (see mnist.log)"
fi

note "result: $([ $failed -eq 0 ] && echo 'all passed' || echo 'FAILURES above')"
write_summary
exit $failed
