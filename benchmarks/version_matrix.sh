#!/usr/bin/env bash
# The version matrix: for each TensorFlow (tensorflow-cpu) and Python, a virtualenv with what pip resolves
# (Keras among it), the whole suite run there with this checkout on PYTHONPATH, and one table row:
# TensorFlow, Keras, Python, passed / failed / skipped, minutes.
#
#   bash benchmarks/version_matrix.sh                       # every TensorFlow minor tested, python3.11
#   bash benchmarks/version_matrix.sh 2.16.2 2.21.0         # some
#   PYTHONS="python3.10 python3.11 python3.12" bash benchmarks/version_matrix.sh 2.18.1
#   KERAS=3.9.2 bash benchmarks/version_matrix.sh 2.16.2    # a Keras of your choice instead of pip's
#   TESTS="tests/engine tests/adapters" bash ...            # part of the suite
#
# Virtualenvs are kept under $MATRIX_DIR (default /tmp/version_matrix; about 1.5 GB each) and reused; each
# run's log is $MATRIX_DIR/<row>.log, the table $MATRIX_DIR/table.md (printed at the end). Packages come from
# the package index. docs/VERSIONS.md holds the last table with its date.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MATRIX_DIR=${MATRIX_DIR:-/tmp/version_matrix}
PYTHONS=${PYTHONS:-python3.11}
TESTS=${TESTS:-tests}
VERSIONS=("$@")
[ ${#VERSIONS[@]} -eq 0 ] && VERSIONS=(2.16.2 2.17.1 2.18.1 2.19.1 2.20.0 2.21.0)
mkdir -p "$MATRIX_DIR"
TABLE="$MATRIX_DIR/table.md"
echo "| TensorFlow | Keras | Python | passed | failed | skipped | minutes |" > "$TABLE"
echo "| --- | --- | --- | --- | --- | --- | --- |" >> "$TABLE"

for python in $PYTHONS; do
  for version in "${VERSIONS[@]}"; do
    row="tf${version}-$(basename "$python")${KERAS:+-keras$KERAS}"
    venv="$MATRIX_DIR/$row"
    log="$MATRIX_DIR/$row.log"
    if [ ! -x "$venv/bin/python" ]; then
      "$python" -m venv "$venv" || { echo "| $version | - | $python | could not make a virtualenv | | | |" >> "$TABLE"; continue; }
    fi
    if ! "$venv/bin/python" -m pip install --quiet "tensorflow-cpu==$version" ${KERAS:+"keras==$KERAS"} \
        numpy absl-py six tensorboard pytest hypothesis pandas tf-slim > "$log" 2>&1; then
      echo "| $version | - | $("$venv/bin/python" -V 2>&1 | cut -d' ' -f2) | pip could not install it (see $log) | | | |" >> "$TABLE"
      continue
    fi
    keras=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('keras'))" 2>/dev/null)
    pyver=$("$venv/bin/python" -V 2>&1 | cut -d' ' -f2)
    start=$(date +%s)
    # shellcheck disable=SC2086
    PYTHONPATH="$ROOT" "$venv/bin/python" -m pytest -q -p no:cacheprovider $TESTS >> "$log" 2>&1
    minutes=$(( ($(date +%s) - start + 30) / 60 ))
    summary=$(grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed)" "$log" | tail -1)
    count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE "[0-9]+" || echo 0; }
    echo "| $version | $keras | $pyver | $(count passed) | $(count failed) | $(count skipped) | $minutes |" >> "$TABLE"
    echo "$row: $summary"
  done
done
echo
cat "$TABLE"
