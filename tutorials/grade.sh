#!/usr/bin/env bash
# Builds and runs one lab's graded tests; ends with "N passed, M failed" and the lab's figures.
#
#   bash tutorials/grade.sh 05              # your code: tutorials/05-*/starter/
#   bash tutorials/grade.sh 05 --solution   # the instructor's solution
#
# The library comes from the build folder $WICK_BUILD_DIR (default: build/, made by
# scripts/build.sh); it is built here (library and Python extension only) when missing.
# C++ labs compile the lab's files into one test binary linked against libwick; Python labs run
# pytest against python/ and the extension in the build folder. Exit status 0 only if every
# test passed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if [ $# -lt 1 ]; then
  echo "usage: tutorials/grade.sh NN [--solution]   (labs: $(cd tutorials && ls -d [0-9][0-9]-* | tr '\n' ' '))" >&2
  exit 2
fi
impl=starter
[ "${2:-}" = "--solution" ] && impl=solution
lab=$(ls -d tutorials/"$1"-* 2>/dev/null | head -1 || true)
if [ -z "$lab" ]; then echo "grade.sh: no lab $1 in tutorials/" >&2; exit 2; fi
BUILD=${WICK_BUILD_DIR:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1

if [ ! -f "$BUILD/libwick.so" ] || ! ls "$BUILD"/python/wick/_C*.so > /dev/null 2>&1; then
  echo "grade.sh: building the library in $BUILD (once)"
  [ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$BUILD" -j "$(nproc)" --target wick _C > /dev/null
fi

echo "== lab $(basename "$lab") ($impl)"
if ls "$lab"/tests/*.cpp > /dev/null 2>&1; then
  # Per-lab settings (lab.env): CXX (mpicxx for MPI labs), LIBS, RUN (e.g. "mpirun -np 2").
  CXX=g++ LIBS="" RUN="" OPT=""
  [ -f "$lab/lab.env" ] && source "$lab/lab.env"
  compiler=$CXX
  command -v ccache > /dev/null && compiler="ccache $CXX"
  out="$BUILD/tutorials"
  mkdir -p "$out"
  export LAB_OUT="$out"
  bin="$out/$(basename "$lab")-$impl"
  if ! $compiler -std=c++17 ${OPT:--O2} -march=native -fopenmp -Wall -Wno-unused-parameter -Wno-unused-variable -Wno-unused-but-set-variable \
      -I"$ROOT" -I"$ROOT/tutorials/common" -I"$lab" \
      "$lab"/tests/*.cpp "$lab/$impl"/*.cpp -o "$bin" \
      -L"$BUILD" -lwick -Wl,-rpath,"$BUILD" $LIBS -lpthread; then
    echo "grade.sh: $lab/$impl does not compile (see the errors above)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  cd "$lab"
  # shellcheck disable=SC2086
  $RUN "$bin" "${@:3}"
else
  cd tutorials
  mkdir -p "$BUILD/tutorials"
  export LAB_OUT="$BUILD/tutorials"
  # pytest's own closing line is dropped: conftest.py prints the lab's "N passed, M failed".
  set +e
  LAB_IMPL=$impl WICK_BUILD_DIR="$BUILD" /usr/bin/python3 -m pytest -q -rN -p no:cacheprovider \
    "$(basename "$lab")/tests" "${@:3}" | grep -v -E "^[0-9]+ (passed|failed|error).* in [0-9.]+s"
  status=${PIPESTATUS[0]}
  set -e
  exit "$status"
fi
