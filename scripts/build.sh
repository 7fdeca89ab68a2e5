#!/usr/bin/env bash
# Configures and builds wick (Release) into build/. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
# Let ccache share results between clones in different folders (CI uses fresh clones).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
log=$(mktemp)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }
grep -E "^-- wick" "$log" || true
rm -f "$log"
cmake --build build -j "$(nproc)"
