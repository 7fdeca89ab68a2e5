#!/usr/bin/env bash
# The tutorials' share of CI (scripts/test.sh calls it after the Release build):
#   1. the committed starters are exactly what make_starter.py generates from the solutions;
#   2. every lab's tests pass against its solution;
#   3. every starter compiles and its tests fail - all of them (proof that each test tests a gap);
#   4. every Python lab's notebook runs top to bottom (nbconvert), against the solution.
# Needs the library and the Python extension built in $WICK_BUILD_DIR (default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
BUILD=${WICK_BUILD_DIR:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
export WICK_BUILD_DIR="$BUILD"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

echo "== tutorials: starters generated from solutions"
python3 tutorials/make_starter.py --check

summary=()
for lab in tutorials/[0-9][0-9]-*/; do
  lab=${lab%/}
  nn=$(basename "$lab" | cut -c1-2)
  if ! bash tutorials/grade.sh "$nn" --solution > "$log/$nn-solution.txt" 2>&1; then
    cat "$log/$nn-solution.txt"
    echo "ci: lab $nn fails against its solution" >&2
    exit 1
  fi
  solution=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$log/$nn-solution.txt" | tail -1)
  if bash tutorials/grade.sh "$nn" > "$log/$nn-starter.txt" 2>&1; then
    cat "$log/$nn-starter.txt"
    echo "ci: lab $nn's starter passes its tests: the tests do not test the gaps" >&2
    exit 1
  fi
  starter=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$log/$nn-starter.txt" | tail -1 || true)
  if grep -q "does not compile" "$log/$nn-starter.txt" || [ "${starter%% *}" != "0" ]; then
    cat "$log/$nn-starter.txt"
    echo "ci: lab $nn's starter must compile and fail every test (got: ${starter:-no result})" >&2
    exit 1
  fi
  summary+=("  $(basename "$lab"): solution $solution; starter $starter")
done

echo "== tutorials: notebooks (nbconvert)"
if /usr/bin/python3 -c "import nbconvert, ipykernel" 2> /dev/null; then
  for nb in tutorials/[0-9][0-9]-*/lab.ipynb; do
    (cd "$(dirname "$nb")" && LAB_IMPL=solution /usr/bin/python3 -m nbconvert --to notebook \
      --execute --ExecutePreprocessor.timeout=120 --output-dir "$log" --output "nb" lab.ipynb \
      > "$log/nbconvert.txt" 2>&1) || { cat "$log/nbconvert.txt"; echo "ci: $nb failed" >&2; exit 1; }
    echo "  $nb ran"
  done
else
  echo "ci: nbconvert/ipykernel missing (bash scripts/setup.sh installs them)" >&2
  exit 1
fi

echo "== tutorials: results"
printf '%s\n' "${summary[@]}"
echo "tutorials/ci.sh: all labs checked in $(($(date +%s) - start)) s"
