#!/usr/bin/env bash
# Before and after a change, side by side in one run: the per-op cost from C++ (bench_ops'
# 4-element add), the cost of calls from Python (python_overhead.py: wick and PyTorch), and the
# instructions a 4-element add, a tiny MLP step and a ResNet-20 training step cost from Python
# (callgrind: a count, so the VM's noise does not move it). Timed runs alternate between the
# builds, so a busy machine slows both alike.
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
  # Instruction counts do not move with the machine's load, so they compare two builds on a busy
  # VM where timings cannot: each workload runs N times and once, and the difference is divided.
  echo "== instructions per call from Python (callgrind; load-independent)"
  script='import sys; sys.path[:0] = [sys.argv[3] + "/python", sys.argv[1] + "/python"]
import wick, wick.models, wick.nn as nn, wick.nn.functional as F
wick.manual_seed(0); wick.set_num_threads(1)
a = wick.ones(4)
mlp = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
adam = wick.optim.Adam(mlp.parameters(), lr=1e-3)
x, y = wick.randn(16, 32), wick.randint(0, 10, (16,))
def mlp_step():
    adam.zero_grad(); F.cross_entropy(mlp(x), y).backward(); adam.step()
net = None
def resnet_step():
    global net, sgd, images, labels
    if net is None:
        net = wick.models.resnet20(); net.train()
        sgd = wick.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
        images, labels = wick.randn(8, 3, 32, 32), wick.randint(0, 10, (8,))
    sgd.zero_grad(); F.cross_entropy(net(images), labels).backward(); sgd.step()
work = {"add": lambda: a + a, "mlp": mlp_step, "resnet": resnet_step}[sys.argv[4]]
work()  # warm-up: allocator caches, lazy set-up
for _ in range(int(sys.argv[2])): work()'
  count() {  # build, iterations, workload
    valgrind --tool=callgrind --callgrind-out-file=/dev/null /usr/bin/python3 -c "$script" \
      "$1" "$2" "$(source_of "$1")" "$3" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
  }
  printf "%-34s %16s %16s %8s\n" workload before after after/before
  for spec in "add 20000 one 4-element add" "mlp 200 tiny MLP step (Adam)" \
              "resnet 1 ResNet-20 training step, batch 8"; do
    set -- $spec
    work=$1 n=$2; shift 2
    per() { local base full; base=$(count "$1" 0 "$work"); full=$(count "$1" "$n" "$work")
            echo $(( (full - base) / n )); }
    b=$(per "$before") f=$(per "$after")
    printf "%-34s %16s %16s %8s\n" "$*" "$b" "$f" "$(awk -v b="$b" -v f="$f" 'BEGIN { printf "%.3f", f / b }')"
  done
fi
