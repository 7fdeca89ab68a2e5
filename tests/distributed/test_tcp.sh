#!/usr/bin/env bash
# The network path, on every CI run: ranks on one machine normally talk through shared memory
# (Open MPI's vader transport), so TCP would go untested until a multi-host job. Here Open MPI is
# told to use only its ob1 point-to-point layer with the TCP and self transports, over loopback -
# what ranks on different hosts use (docs/distributed.md, "Across hosts").
#   test_tcp.sh <mpiexec> <wick_dist_tests>
set -uo pipefail
mpiexec=$1
tests=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1 OMPI_MCA_pml=ob1
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# First, proof that the transport setting is obeyed: with only "self" two ranks cannot reach each
# other, so the job must fail. If it passed, Open MPI would be ignoring OMPI_MCA_btl, and the run
# below could be using shared memory after all.
if OMPI_MCA_btl=self timeout 60 "$mpiexec" -np 2 "$tests" --gtest_filter='Collectives.AllReduce*' \
    > "$log" 2>&1; then
  echo "FAIL: with OMPI_MCA_btl=self the ranks still communicated; the transport is not forced"
  cat "$log"
  exit 1
fi
echo "ok   btl=self alone cannot connect two ranks (the setting is obeyed)"

if ! OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo timeout 170 "$mpiexec" -np 2 "$tests" \
    --gtest_filter='Collectives.*:Ring.*:DDP.*' > "$log" 2>&1; then
  echo "FAIL: collectives over TCP"
  cat "$log"
  exit 1
fi
if ! grep -q "PASSED" "$log"; then
  echo "FAIL: no test passed over TCP"
  cat "$log"
  exit 1
fi
echo "ok   over TCP (loopback): $(grep -c "OK \]" "$log") collective, ring and DDP tests passed"
