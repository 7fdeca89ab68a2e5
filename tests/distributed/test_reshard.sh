#!/usr/bin/env bash
# A sharded FSDP checkpoint written by 2 ranks resumes on 2, 3 and 4 ranks to the same losses
# (Note [resharding] in python/wick/distributed/checkpoint.py).
#   test_reshard.sh <mpiexec> <python>     (PYTHONPATH must find wick)
set -euo pipefail
mpiexec=$1
python=$2
probe="$(dirname "$0")/reshard_probe.py"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$mpiexec" -np 2 "$python" "$probe" save "$dir"
for np in 2 3 4; do
  "$mpiexec" -np "$np" "$python" "$probe" resume "$dir"
done
"$python" - "$dir" <<'PY'
import sys
d = sys.argv[1]
ref = [float(v) for v in open(f"{d}/losses.txt").read().split()]
for np in (2, 3, 4):
    got = [float(v) for v in open(f"{d}/resumed-{np}.txt").read().split()]
    worst = max(abs(a - b) for a, b in zip(ref, got))
    assert len(got) == len(ref) and worst <= 1e-5, (np, ref, got)
    print(f"ok   resumed on {np} ranks: losses {got} (largest difference {worst:.1e})")
PY
