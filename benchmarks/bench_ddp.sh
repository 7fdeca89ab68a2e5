#!/usr/bin/env bash
# DDP benchmark: training samples/s of `train_mnist` (the CNN) with 1 and 2 processes on this
# machine, and the share of each rank's training time spent waiting for communication after
# backward, with gradient buckets (the default: reduced during backward) and with one bucket
# reduced after backward (--ddp-single-bucket 1). Prints the figures side by side.
#   bash benchmarks/bench_ddp.sh [build folder (default build)] [epochs (default 2)]
# Runs as root too (it sets Open MPI's permission variables) and oversubscribes when the ranks'
# threads outnumber the cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
epochs=${2:-2}
binary=$build/examples/train_mnist
[ -x "$binary" ] || { echo "bench_ddp: build train_mnist first ($binary)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cores=$(nproc)
common=(--model cnn --epochs "$epochs" --workers 1 --json 1 --metrics /tmp/wick_bench_ddp/m.csv)

# run <label> <command...>: runs the command `repeats` times (the machine may be shared) and prints
# one row: the best samples/s, and the median share of time waiting for communication.
repeats=${REPEATS:-3}
run() {
  local label=$1
  shift
  local results=()
  for _ in $(seq "$repeats"); do
    results+=("$("$@" 2> /dev/null | grep '^{"framework"')")
  done
  python3 - "$label" "${results[@]}" <<'PY'
import json, sys
label, runs = sys.argv[1], [json.loads(r) for r in sys.argv[2:]]
best = max(r["samples_per_second"] for r in runs)
waits = sorted(r["comm_wait_share"] for r in runs)
print(f"{label:<46} {best:>9.0f} {100 * waits[len(waits) // 2]:>11.1f}%"
      f" {100 * runs[0]['test_accuracy']:>9.2f}%")
PY
}

echo "train_mnist --model cnn, $epochs epochs of 8,000 digits, batch 64 per rank, $cores cores;"
echo "best samples/s and median communication wait of $repeats runs each (REPEATS=n to change)"
printf "%-46s %9s %12s %10s\n" "configuration" "samples/s" "comm wait" "test acc"
run "1 process, $cores threads (no DDP)" "$binary" "${common[@]}" --threads "$cores"
run "1 process, 1 thread (no DDP)" "$binary" "${common[@]}" --threads 1
# mpirun binds a lone rank to one core; --bind-to none lets its threads use them all.
run "1 rank DDP, $cores threads" \
  mpirun -np 1 --bind-to none "$binary" "${common[@]}" --ddp mpi --threads "$cores"
threads=$((cores / 2 > 0 ? cores / 2 : 1))
run "2 ranks DDP, $threads thread(s) each, buckets" \
  mpirun -np 2 "$binary" "${common[@]}" --ddp mpi --threads "$threads"
run "2 ranks DDP, $threads thread(s) each, one bucket" \
  mpirun -np 2 "$binary" "${common[@]}" --ddp mpi --threads "$threads" --ddp-single-bucket 1
echo "comm wait: rank 0's time blocked on all-reduces after backward, as a share of its training"
echo "time (with 2 ranks it includes waiting for the slower rank to finish its backward)"
