#!/usr/bin/env bash
# Fetches, on a networked machine, everything tests/gpu/run.sh needs to build wick on a bare GPU
# machine without network: the Debian packages of the build's header-only and small dependencies
# (as .deb files, unpacked there with dpkg -x into a local prefix, no root, no apt), pybind11 as a
# wheel (its Debian version predates Python 3.12), pytest's wheels, and copies of the cuDNN and NCCL headers of
# this machine's CUDA install (the GPU machine's cuDNN may be only PyTorch's wheel's library).
#
#   bash tests/gpu/prepare.sh            # into tests/gpu/offline/ (ignored by git)
#   OFFLINE_DIR=/some/dir bash tests/gpu/prepare.sh
#
# tests/gpu/check_offline_set.sh (part of scripts/test.sh) proves the set is complete.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${OFFLINE_DIR:-tests/gpu/offline}
# What the CMake build REQUIREs or uses beyond the compiler, CUDA, OpenMP and Python:
packages=(
  libeigen3-dev                          # Eigen (CMakeLists.txt: float64 GEMM)
  nlohmann-json3-dev                     # nn/: safetensors headers
  libgtest-dev                           # tests/: GoogleTest (static libraries and headers)
  libbenchmark-dev libbenchmark1debian   # benchmarks/: Google Benchmark (and its .so)
  zlib1g-dev zlib1g                      # data/: gzip MNIST (zlib1g: what libz.so points to)
  pybind11-dev                           # python/: pybind11 (fallback for the wheel below)
  libdlpack-dev                          # python/: dlpack.h
)
mkdir -p "$dir/debs" "$dir/wheels" "$dir/headers"
rm -f "$dir"/debs/*.deb
(cd "$dir/debs" && apt-get download "${packages[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
for p in "${packages[@]}"; do
  ls "$dir/debs/${p}_"*.deb >/dev/null 2>&1 || { echo "prepare: could not download $p"; exit 1; }
done
# pybind11 2.13 (PyPI wheel: headers and CMake config; supports Python 3.7-3.13).
rm -f "$dir"/wheels/*.whl
python3 -m pip download --quiet --no-deps --only-binary :all: pybind11==2.13.6 -d "$dir/wheels" ||
  echo "prepare: pybind11 wheel not downloaded; run.sh falls back to Debian's pybind11 2.10"
# pytest and its pure-Python dependencies, for an interpreter without it (PyTorch's images often
# lack it); run.sh puts them on PYTHONPATH only when `import pytest` fails.
python3 -m pip download --quiet --no-deps --only-binary :all: -d "$dir/wheels" \
  pytest==8.3.4 pluggy==1.5.0 iniconfig==2.0.0 packaging==24.2 ||
  echo "prepare: pytest wheels not downloaded; the GPU machine's Python needs its own pytest"
# cuDNN and NCCL headers from this machine's CUDA (NVIDIA's, not Debian's: copied, not fetched).
cuda_include=${CUDA_HOME:-/usr/local/cuda}/include
for lib in cudnn nccl; do
  rm -rf "$dir/headers/$lib" && mkdir -p "$dir/headers/$lib/include"
  if ls "$cuda_include/$lib"*.h >/dev/null 2>&1; then
    cp -L "$cuda_include/$lib"*.h "$dir/headers/$lib/include/"
  else
    echo "prepare: no $lib headers in $cuda_include; run.sh will need them on the GPU machine"
  fi
done
{
  echo "# written by tests/gpu/prepare.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  for f in "$dir"/debs/*.deb "$dir"/wheels/*.whl; do [ -e "$f" ] && basename "$f"; done
  grep -h "define CUDNN_MAJOR \|define CUDNN_MINOR \|define NCCL_MAJOR \|define NCCL_MINOR " \
    "$dir"/headers/*/include/*version*.h "$dir"/headers/nccl/include/nccl.h 2>/dev/null || true
} >"$dir/MANIFEST"
echo "prepare: $(ls "$dir"/debs/*.deb | wc -l) packages, $(ls "$dir"/wheels/*.whl 2>/dev/null | wc -l)" \
  "wheel(s), headers of $(ls "$dir/headers" | tr '\n' ' ')in $dir ($(du -sh "$dir" | cut -f1))"
