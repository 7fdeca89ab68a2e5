#!/usr/bin/env bash
# End to end: `train_mnist --ddp` on 2 ranks with 32 digits each per batch visits the same 64
# digits per step as one process with batches of 64 (the DistributedSampler interleaves one shared
# permutation), so after an epoch its losses and accuracies equal the single process's. Also: only
# rank 0 prints, --timeline writes the trace and the SVG, --accumulate 2 (DDP's no_sync) equals
# one process with twice the batch, and --ddp-single-bucket runs.
#   test_train_mnist_ddp.sh <mpiexec> <train_mnist> <repository root>
set -euo pipefail
mpiexec=$1
binary=$2
cd "$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--model mlp --epochs 1 --workers 0 --seed 3)

"$binary" "${common[@]}" --batch-size 64 --threads 1 --metrics "$tmp/one.csv" > "$tmp/one.log"
"$mpiexec" -np 2 "$binary" "${common[@]}" --ddp --batch-size 32 --metrics "$tmp/two.csv" \
  --timeline "$tmp/step.json" --timeline-step 5 > "$tmp/two.log" 2>&1 || { cat "$tmp/two.log"; exit 1; }

# Train loss and accuracy, test loss and accuracy: equal to within float rounding.
one=$(awk -F, '$1 == 1 {print $2, $3, $4, $5}' "$tmp/one.csv")
two=$(awk -F, '$1 == 1 {print $2, $3, $4, $5}' "$tmp/two.csv")
awk -v a="$one" -v b="$two" 'BEGIN {
  n = split(a, x, " "); split(b, y, " ");
  if (n != 4) exit 1;
  for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-4) exit 1 }
}' || { echo "2-rank DDP '$two' differs from one process '$one'" >&2; exit 1; }

[ "$(grep -c '^summary:' "$tmp/two.log")" -eq 1 ] || { echo "not only rank 0 printed" >&2; cat "$tmp/two.log"; exit 1; }
grep -q "DDP: 2 ranks (mpi backend)" "$tmp/two.log" || { cat "$tmp/two.log"; exit 1; }
grep -q '"name": "all-reduce bucket 0", "ph": "X", "pid": 1' "$tmp/step.json" || { echo "no rank 1 bucket in the trace" >&2; exit 1; }
grep -q "<svg" "$tmp/step.svg" || { echo "no timeline SVG" >&2; exit 1; }

# --accumulate 2 under DDP (no_sync for the first backward of each pair): 2 ranks x 32 digits x 2
# batches per step see the 128 digits one process sees with batches of 128.
"$binary" "${common[@]}" --batch-size 128 --threads 1 --metrics "$tmp/one128.csv" > /dev/null
"$mpiexec" -np 2 "$binary" "${common[@]}" --ddp --batch-size 32 --accumulate 2 \
  --metrics "$tmp/accumulate.csv" > "$tmp/accumulate.log" 2>&1 || { cat "$tmp/accumulate.log"; exit 1; }
one=$(awk -F, '$1 == 1 {print $2, $3, $4, $5}' "$tmp/one128.csv")
acc=$(awk -F, '$1 == 1 {print $2, $3, $4, $5}' "$tmp/accumulate.csv")
awk -v a="$one" -v b="$acc" 'BEGIN {
  n = split(a, x, " "); split(b, y, " ");
  if (n != 4) exit 1;
  for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-4) exit 1 }
}' || { echo "2-rank DDP with --accumulate 2 '$acc' differs from one process, batch 128 '$one'" >&2; exit 1; }
# no_sync: one all-reduce per pair of batches (125 batches per rank: 63 optimizer steps).
grep -q "ddp: 2 ranks, 63 all-reduces" "$tmp/accumulate.log" || { cat "$tmp/accumulate.log"; exit 1; }

"$mpiexec" -np 2 "$binary" "${common[@]}" --ddp --ddp-single-bucket 1 --metrics "$tmp/single.csv" \
  > "$tmp/single.log" 2>&1 || { cat "$tmp/single.log"; exit 1; }
grep -q "one bucket per dtype and device" "$tmp/single.log" || { cat "$tmp/single.log"; exit 1; }
echo "train_mnist --ddp: 2 ranks equal one process ($two), with --accumulate 2 too ($acc), timeline written, single-bucket mode runs"
