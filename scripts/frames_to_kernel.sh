#!/usr/bin/env bash
# The call stack from Python to an op's CPU kernel, as gdb sees it in the Release build: how many
# frames `wick.OP(t)` passes through before the loop runs (docs/architecture.md, "From a call to a
# kernel"). Needs gdb and a built extension.
#
#   bash scripts/frames_to_kernel.sh [OP] [BUILD]      # default: exp, build/
set -euo pipefail
cd "$(dirname "$0")/.."
op=${1:-exp} build=$(realpath "${2:-build}")
script=$(mktemp --suffix=.py)
trap 'rm -f "$script"' EXIT
cat > "$script" <<PY
import os, signal, sys
sys.path[:0] = ["$PWD/python", "$build/python"]
import wick
t = wick.ones(1000)
os.kill(os.getpid(), signal.SIGTRAP)  # gdb stops here, after libwick is loaded
wick.$op(t)
PY
# The CPU kernel's instantiation for this op's functor; the address gdb prints for it.
addr=$(gdb -q -batch -ex run -ex "info functions cpu::.anonymous namespace.::unary_kernel<wick::scalar::${op}_fn," \
  --args /usr/bin/python3 "$script" 2>&1 | sed -n 's/^\(0x[0-9a-f]*\) *void wick::cpu::.*/\1/p' | head -1)
[ -n "$addr" ] || { echo "frames_to_kernel: no CPU unary kernel found for '$op'" >&2; exit 2; }
frames=$(gdb -q -batch -ex run -ex "break *$addr" -ex continue -ex "bt 40" \
  --args /usr/bin/python3 "$script" 2>&1 | grep -E '^#' | sed -E 's/ \(.*$//; s/ from .*$//; s/^#([0-9]+) +(0x[0-9a-f]+ in )?/#\1 /')
# Frames from the kernel up to where the extension was entered (pybind11's dispatcher, or the
# wrapper that turns its errors into one line); below that is the Python interpreter.
entry=$(echo "$frames" | grep -n -E 'one_line_dispatcher|cpp_function::dispatcher' | tail -1 | cut -d: -f1)
echo "$frames" | head -n "$entry" | cut -c1-160
echo "wick.$op(t): $entry frames from the extension's entry to the CPU kernel"
