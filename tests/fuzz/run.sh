#!/usr/bin/env bash
# Builds the libFuzzer harnesses (build-fuzz: clang, ASan + UBSan + coverage, CPU only) and runs
# each for SECONDS (default 20) over its seed corpus (tests/fuzz/corpus/<name>/, read only: new
# inputs go to build-fuzz/corpus/<name>/). Fails on any finding - a crash, a sanitizer report, a
# leak, a timeout (10 s per input) or an allocation over 2 GiB - and leaves its reproducer in
# build-fuzz/findings/. Prints each fuzzer's executions.
#
# fuzz_onnx_import is Python (wick.onnx.load under atheris, libFuzzer for Python): it runs with
# .venv's python against the extension in $WICK_BUILD_DIR (default build/, scripts/build.sh's),
# and is skipped, saying why, where atheris or the extension is missing.
#
#   tests/fuzz/run.sh [SECONDS] [FUZZER...]      e.g. tests/fuzz/run.sh 20
#   FUZZ_RUNS=1000000 tests/fuzz/run.sh 0 fuzz_mnist   a fixed number of executions instead
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20}
shift || true
all=(fuzz_safetensors fuzz_checkpoint fuzz_checkpoint_struct fuzz_mnist fuzz_cifar10 fuzz_trace
     fuzz_alloc_config fuzz_tfrecord fuzz_example fuzz_image fuzz_lmdb fuzz_onnx_import)
fuzzers=("$@")
[ ${#fuzzers[@]} -gt 0 ] || fuzzers=("${all[@]}")
build=build-fuzz
native=()
for f in "${fuzzers[@]}"; do [ "$f" = fuzz_onnx_import ] || native+=("$f"); done

export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
if [ ${#native[@]} -gt 0 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    # Tests, tools' siblings and the Python extension are off: only the harnesses and the library.
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
      -DCMAKE_CXX_COMPILER=clang++ -DWICK_FUZZ=ON -DWICK_CUDA=OFF -DWICK_PYTHON=OFF \
      -DWICK_DISTRIBUTED=OFF -DWICK_TESTS=OFF -DWICK_BENCHMARKS=OFF -DWICK_EXAMPLES=OFF > /dev/null
  fi
  cmake --build "$build" -j "$(nproc)" --target "${native[@]}"
fi
# The Python harness: .venv's python (scripts/setup.sh installs atheris there), the extension of
# the Release build. Not built with ASan: a crash in wick's C++ is still a deadly signal.
python=/usr/bin/python3
[ -x .venv/bin/python ] && python=.venv/bin/python
wick_build=${WICK_BUILD_DIR:-build}

mkdir -p "$build/findings"
# One libFuzzer process per core would halve each one's speed on a shared machine; run in turn.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
limit=(-max_total_time="$seconds")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
failed=()
skipped=()
for f in "${fuzzers[@]}"; do
  work="$build/corpus/$f"
  mkdir -p "$work"
  log="$build/findings/$f.log"
  extra=()  # a harness's dictionary of format tokens, if it has one
  [ -f "tests/fuzz/$f.dict" ] && extra=(-dict="tests/fuzz/$f.dict")
  start=$(date +%s)
  harness=("$build/tests/fuzz/$f")
  if [ "$f" = fuzz_onnx_import ]; then
    if ! "$python" -c "import atheris, onnx" 2> /dev/null; then
      printf '%-24s skipped: %s has no atheris or onnx (bash scripts/setup.sh)\n' "$f" "$python"
      skipped+=("$f")
      continue
    fi
    if ! ls "$wick_build"/python/wick/_C*.so > /dev/null 2>&1; then
      printf '%-24s skipped: no wick extension in %s (bash scripts/build.sh)\n' "$f" "$wick_build"
      skipped+=("$f")
      continue
    fi
    harness=(env WICK_BUILD_DIR="$wick_build" "$python" tests/fuzz/fuzz_onnx_import.py)
  fi
  if "${harness[@]}" "${limit[@]}" "${extra[@]}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/findings/$f-" "$work" "tests/fuzz/corpus/$f" \
    > "$log" 2>&1; then
    status=ok
  else
    status=FINDING
    failed+=("$f")
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  printf '%-24s %-8s %10s executions %5d s\n' "$f" "$status" "$runs" "$(( $(date +%s) - start ))"
  if [ "$status" = FINDING ]; then
    grep -m 12 -E 'ERROR|SUMMARY|finding|#[0-9]+ 0x|Error:|Exception' "$log" || true
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (logs and reproducers in $build/findings/)" >&2
  exit 1
fi
note=""
[ ${#skipped[@]} -eq 0 ] || note=" (skipped: ${skipped[*]})"
echo "fuzz: $(( ${#fuzzers[@]} - ${#skipped[@]} )) fuzzers, no findings$note"
