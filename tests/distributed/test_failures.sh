#!/usr/bin/env bash
# Launch errors and failing ranks end the job with a clear message in bounded time, never a hang.
#   test_failures.sh <mpiexec> <failure_probe> [<python>]   (with python: FSDP's cases too)
# Each case must finish well within 30 s; the hang case's timeout is 2 s, the exit case's 120 s
# (so finishing fast there shows that mpirun, not the timeout, stopped the other ranks).
set -uo pipefail
mpiexec=$1
probe=$2
python=${3:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0

# expect <name> <text the output must contain> <command...>: non-zero exit, text, under 30 s.
expect() {
  local name=$1 text=$2
  shift 2
  local start=$SECONDS
  timeout 60 "$@" > "$log" 2>&1
  local code=$? elapsed=$((SECONDS - start))
  if [ "$code" -eq 0 ] || ! grep -qF -- "$text" "$log" || [ "$elapsed" -ge 30 ]; then
    echo "FAIL $name: exit $code after ${elapsed} s; expected a failure mentioning '$text':"
    cat "$log"
    failed=1
  else
    echo "ok   $name: exit $code after ${elapsed} s: $(grep -F -m1 -- "$text" "$log" | cut -c1-150)"
  fi
}

expect "no mpirun" "not started by mpirun" "$probe" plain
expect "wrong world size" "expects a world size of 5 but mpirun started 2" \
  "$mpiexec" -np 2 "$probe" world 5
expect "a rank hangs" "of 3 timed out after 2 s waiting for the other ranks" \
  "$mpiexec" -np 3 "$probe" hang 2
expect "a rank exits" "rank 1 failed on purpose" "$mpiexec" -np 3 "$probe" exit
if [ -n "$python" ]; then
  sharded="$(dirname "$0")/sharded_failure_probe.py"
  expect "a rank raises in an FSDP step" "rank 1 failed on purpose" \
    "$mpiexec" -np 3 "$python" "$sharded" raise
  expect "a rank hangs in an FSDP step" "timed out after 2 s waiting for the other ranks" \
    "$mpiexec" -np 3 "$python" "$sharded" hang
fi
# And the probe succeeds when launched right.
if ! timeout 60 "$mpiexec" -np 2 "$probe" plain > "$log" 2>&1 || ! grep -q "all_reduce gave 2" "$log"; then
  echo "FAIL a correct launch:"; cat "$log"; failed=1
else
  echo "ok   a correct launch"
fi
exit $failed
