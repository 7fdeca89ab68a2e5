#!/usr/bin/env bash
# Proves, without a GPU, that the offline set tests/gpu/prepare.sh fetches is complete: unpacks it
# into a temporary prefix and configures the CUDA build (sm_90, tests, benchmarks, Python, NCCL)
# against that prefix only, with the system's include, library and package folders hidden from
# CMake, as on the bare GPU machine. A package missing from the set fails here, on every CI run.
# Runs prepare.sh first unless OFFLINE_DIR names a prepared set. A configure, not a build: seconds.
#
#   bash tests/gpu/check_offline_set.sh        # exit 0: the set is complete
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
set_dir=${OFFLINE_DIR:-tests/gpu/offline}
if [ -z "${OFFLINE_DIR:-}" ]; then
  bash tests/gpu/prepare.sh >/dev/null || { echo "check_offline_set: prepare.sh failed"; exit 1; }
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null || { echo "check_offline_set: skipped (no CUDA toolkit: nvcc)"; exit 0; }
# shellcheck source=tests/gpu/offline.sh
source tests/gpu/offline.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
offline_unpack "$set_dir" "$tmp/prefix"
mapfile -t offline_args < <(offline_cmake_args "$set_dir" "$tmp/prefix")
# Hidden: every system prefix and the folders find_* would search in them. The compiler, CUDA
# (found through nvcc), OpenMP and the interpreter's own headers stay, as on the GPU machine, and
# so do the C runtime's library folders (the compiler's implicit link directories: libpthread,
# libgomp), where no -dev package's headers or CMake files are.
py=$(command -v python3)
py_include=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
hidden_dirs="/usr/include;/usr/lib;/usr/lib/x86_64-linux-gnu/cmake"
hidden_dirs+=";/usr/share;/usr/share/cmake;/usr/lib/cmake;/usr/local/include;/usr/local/lib"
hidden_dirs+=";/usr/local/share;/lib"
log=$tmp/configure.log
if ! CUDNN_ROOT='' NCCL_ROOT='' cmake -S . -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
    -DWICK_CUDA=ON -DWICK_CUDA_ARCHS=90 -DWICK_TESTS=ON -DWICK_BENCHMARKS=ON \
    -DWICK_EXAMPLES=ON -DWICK_DISTRIBUTED=OFF \
    "-DPython3_EXECUTABLE=$py" "-DPython3_INCLUDE_DIR=$py_include" \
    "${offline_args[@]}" \
    "-DCUDNN_INCLUDE_DIR=$set_dir/headers/cudnn/include" \
    "-DNCCL_INCLUDE_DIR=$set_dir/headers/nccl/include" \
    "-DCMAKE_IGNORE_PREFIX_PATH=/usr;/usr/local;/" \
    "-DCMAKE_SYSTEM_IGNORE_PREFIX_PATH=/usr;/usr/local;/" \
    "-DCMAKE_IGNORE_PATH=$hidden_dirs" "-DCMAKE_SYSTEM_IGNORE_PATH=$hidden_dirs" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
    >"$log" 2>&1; then
  echo "check_offline_set: FAILED - configuring against the offline set alone failed:"
  grep -E "Could NOT find|not found|Error|error" "$log" | head -n 10
  exit 1
fi
# Each dependency must have come from the prefix, and every part the GPU check needs is on.
cache=$tmp/build/CMakeCache.txt
problems=()
for var in Eigen3_DIR nlohmann_json_DIR GTest_DIR benchmark_DIR pybind11_DIR ZLIB_INCLUDE_DIR \
           DLPACK_INCLUDE_DIR; do
  value=$(grep -E "^$var:" "$cache" | cut -d= -f2- || true)
  case "$value" in
    "$tmp/prefix"*) ;;
    *) problems+=("$var=${value:-unset} (not from the offline set)") ;;
  esac
done
for on in WICK_PYTHON WICK_TESTS WICK_BENCHMARKS; do
  grep -q "^$on:BOOL=ON" "$cache" || problems+=("$on is off")
done
grep -q "wick: NCCL backend" "$log" || problems+=("the NCCL backend is off")
# pytest for an interpreter without it (run.sh puts the set's pylib/ on PYTHONPATH then).
PYTHONPATH="$tmp/prefix/pylib" "$py" -S -c "import pytest" 2>/dev/null ||
  problems+=("pytest does not import from the set's wheels")
if [ ${#problems[@]} -gt 0 ]; then
  echo "check_offline_set: FAILED - ${problems[*]}"
  exit 1
fi
echo "check_offline_set: the offline set ($(du -sh "$set_dir" | cut -f1)) configures the CUDA" \
  "build with tests, benchmarks, Python and NCCL, system folders hidden ($(( $(date +%s) - start )) s)"
