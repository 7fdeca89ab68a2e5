#!/usr/bin/env bash
# Installs the Debian packages wick needs to build, test and benchmark, then the Python packages
# Debian does not ship into .venv (hypothesis, onnx, onnxruntime, atheris). Idempotent: packages
# already present are left alone, and apt and pip run only when something is missing.
#
#   bash scripts/setup.sh           # what the build, the tests and CI need
#   bash scripts/setup.sh --bench   # and a current PyTorch 2.x from PyPI in .venv-bench (~5 GiB
#                                   # with its CUDA libraries): the benchmarks' second reference
#   bash scripts/setup.sh --fixtures  # and TensorFlow from PyPI in .venv-fixtures (~1 GiB), only
#                                   # to regenerate tests/fixtures/tfrecord/; tests never need it
set -euo pipefail
bench=0
fixtures=0
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    --fixtures) fixtures=1 ;;
    *) echo "setup: unknown option $arg (expected --bench or --fixtures)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ccache clang-format  # toolchain, compiler cache, formatting check
  clang                                      # libFuzzer harnesses (tests/fuzz/run.sh)
  libeigen3-dev                              # Eigen: float64 GEMM
  libgtest-dev                               # C++ tests
  libbenchmark-dev                           # C++ benchmarks
  libopenblas-dev                            # the BLAS NumPy uses; GEMM benchmark reference
  zlib1g-dev                                 # zlib: reading gzip-compressed MNIST files
  libpng-dev libjpeg62-turbo-dev             # ImageFolder: PNG and JPEG decoding (optional in CMake)
  liblmdb-dev                                # LMDB image stores (optional in CMake)
  python3-pil                                # scripts/write_digit_images.py: digits as PNG/JPEG
  nlohmann-json3-dev                         # JSON for safetensors checkpoint headers
  libonnx-dev libprotobuf-dev                # ONNX's protobuf classes: ONNX export in C++
  libopenmpi-dev                             # MPI: the distributed backend for CPU tensors
  openmpi-bin                                # mpirun: starts the ranks of multi-process tests
  python3-dev pybind11-dev                   # the Python extension wick._C
  libdlpack-dev                              # DLPack ABI header: zero-copy tensor exchange
  python3-numpy python3-pytest               # Python tests (tests/python)
  python3-pytest-timeout                     # a hung test fails with its stack (pyproject.toml)
  python3-torch                              # PyTorch: the reference the Python tests compare to
  python3-torchvision                        # torchvision: the reference for wick.models
  python3-pip python3-setuptools python3-wheel python3-venv  # pip install . (setup.py)
  python3-nbconvert python3-nbclient python3-ipykernel     # tutorials: notebooks run in CI
  chromium                                   # the memory viewer, tested in a headless browser
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# .venv: Debian's python3 with its packages (numpy, torch, pytest) visible, plus what only PyPI
# has. scripts/test.sh runs pytest with .venv/bin/python when it exists.
cd "$(dirname "$0")/.."
# hypothesis: property tests (tests/python/test_properties.py); onnx and onnxruntime: the ONNX
# export is checked by onnx.checker and run by ONNX Runtime (tests/python/test_onnx*.py).
# atheris: libFuzzer for Python, which runs the ONNX importer's fuzzer (tests/fuzz/run.sh's
# fuzz_onnx_import; PyPI has wheels with libFuzzer built in, so no clang is needed for it).
# "numpy<2" keeps Debian's NumPy 1.x, which wick's extension and Debian's PyTorch are built against.
pip_packages=(hypothesis onnx onnxruntime atheris "numpy<2")
if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
if ! .venv/bin/python -c "import hypothesis, onnx, onnxruntime, atheris" 2>/dev/null; then
  echo "setup: pip-installing ${pip_packages[*]} into .venv"
  .venv/bin/python -m pip install -q "${pip_packages[@]}"
else
  echo "setup: .venv has ${pip_packages[*]}"
fi

# .venv-bench: a current PyTorch 2.x, only on request. It is kept apart from .venv because the
# tests compare against Debian's PyTorch 1.13, which a pip-installed torch would shadow there.
if [ "$bench" = 1 ]; then
  if [ ! -x .venv-bench/bin/python ]; then
    /usr/bin/python3 -m venv --system-site-packages .venv-bench
  fi
  if ! .venv-bench/bin/python -c "import torch, sys; sys.exit(int(torch.__version__.split('.')[0]) < 2)" 2>/dev/null; then
    echo "setup: pip-installing a current torch into .venv-bench"
    .venv-bench/bin/python -m pip install -q "torch>=2"
  fi
  echo "setup: .venv-bench has torch $(.venv-bench/bin/python -c 'import torch; print(torch.__version__)')"
fi

# .venv-fixtures: TensorFlow, only to write the TFRecord fixtures and check that TensorFlow reads
# wick's files (tests/fixtures/tfrecord/make_tfrecord_fixtures.py). Apart from .venv because
# TensorFlow brings NumPy 2, and wick's extension is built against Debian's NumPy 1.x.
if [ "$fixtures" = 1 ]; then
  if [ ! -x .venv-fixtures/bin/python ]; then
    /usr/bin/python3 -m venv --system-site-packages .venv-fixtures
  fi
  if ! .venv-fixtures/bin/python -c "import tensorflow" 2>/dev/null; then
    echo "setup: pip-installing tensorflow-cpu into .venv-fixtures"
    .venv-fixtures/bin/python -m pip install -q tensorflow-cpu
  fi
  echo "setup: .venv-fixtures has tensorflow $(.venv-fixtures/bin/python -c 'import os; os.environ["TF_CPP_MIN_LOG_LEVEL"]="3"; import tensorflow as tf; print(tf.__version__)' 2>/dev/null)"
fi
