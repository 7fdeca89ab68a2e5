#!/usr/bin/env bash
# Fails when a C++ or CUDA source differs from what clang-format (.clang-format) would write.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh')
if ! clang-format --dry-run --Werror $files; then
  echo "check_format: run 'clang-format -i' on the files above" >&2
  exit 1
fi
echo "check_format: $(echo "$files" | wc -l) files formatted"
