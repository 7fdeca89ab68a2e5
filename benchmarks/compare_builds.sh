#!/usr/bin/env bash
# Before and after a change, side by side in one run: the per-op cost from C++ (bench_ops'
# 4-element add), the cost of calls from Python (python_overhead.py: wick and PyTorch), and the
# instructions one 4-element add costs from Python (callgrind: a count, so the VM's noise does not
# move it). Runs alternate between the builds, so a busy machine slows both alike.
#
#   bash benchmarks/compare_builds.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]
#
# Each build folder needs the bench_ops and _C targets (e.g. a worktree of the old commit built
# with scripts/build.sh; -DWICK_CUDA=OFF is enough).
set -euo pipefail
cd "$(dirname "$0")/.."
before=$(realpath "$1") after=$(realpath "$2") rounds=${3:-3}
for b in "$before" "$after"; do
  [ -x "$b/benchmarks/bench_ops" ] && [ -d "$b/python/wick" ] ||
    { echo "compare_builds: $b lacks bench_ops or the Python extension" >&2; exit 2; }
done

echo "== C++: one 4-element float add (ns per op; best of $rounds rounds each, alternating)"
for round in $(seq "$rounds"); do
  for b in "$before" "$after"; do
    "$b/benchmarks/bench_ops" --benchmark_filter='add_4' 2>/dev/null |
      sed -n "s/.*float add: \(.*\) ns (out of place), \(.*\) ns (in place).*/\1 \2/p" |
      sed "s|^|$([ "$b" = "$before" ] && echo before || echo after) |"
  done
done | awk '{ if (!($1 in o) || $2 < o[$1]) o[$1] = $2; if (!($1 in i) || $3 < i[$1]) i[$1] = $3 }
  END { printf "%-8s %12s %10s\n", "build", "out-of-place", "in-place";
        printf "%-8s %12s %10s\n", "before", o["before"], i["before"];
        printf "%-8s %12s %10s\n", "after", o["after"], i["after"] }'

# Each build's own source tree holds the Python package that matches its extension.
source_of() { sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt"; }

echo "== Python: calls from Python, wick next to PyTorch (python_overhead.py)"
for b in "$before" "$after"; do
  echo "-- $([ "$b" = "$before" ] && echo before || echo after): $b"
  /usr/bin/python3 "$(source_of "$b")/benchmarks/python_overhead.py" --build "$b" | tail -n +2
done

if command -v valgrind > /dev/null; then
  echo "== instructions per 4-element add from Python (callgrind, 20,000 adds)"
  script='import sys; sys.path[:0] = [sys.argv[3] + "/python", sys.argv[1] + "/python"]; import wick
a = wick.ones(4)
def run(n):
    for _ in range(n): a + a
run(int(sys.argv[2]))'
  for b in "$before" "$after"; do
    count() {
      valgrind --tool=callgrind --callgrind-out-file=/dev/null /usr/bin/python3 -c "$script" \
        "$b" "$1" "$(source_of "$b")" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    base=$(count 0) full=$(count 20000)
    echo "$([ "$b" = "$before" ] && echo before || echo after): $(( (full - base) / 20000 )) instructions"
  done
fi
