#!/usr/bin/env bash
# Batch-job launcher. Makes .venv and installs the project on first use.
#   ./run.sh                    train MNIST, evaluate on the test set, export (same as ./run.sh mnist)
#   ./run.sh mnist   [flags]    python -m mnist.main [flags]
#   ./run.sh cifar10 [flags]    python -m cifar10.main [flags]
#   ./run.sh cifar10_tfrecords [flags]   python -m cifar10.generate_cifar10_tfrecords [flags]
#   ./run.sh dogcat  [flags]    python -m dogcat.main [flags]
#   ./run.sh test    [pytest args]       lint (ruff), then the test suite
#   ./run.sh bench NAME [flags] python benchmarks/NAME.py [flags]
# TF_EXTRA=gpu ./run.sh ...     installs tensorflow[and-cuda] instead of tensorflow-cpu.
set -euo pipefail
cd "$(dirname "$0")"
VENV="${VENV:-.venv}"
TF_EXTRA="${TF_EXTRA:-cpu}"
PY="$VENV/bin/python"

install() {
  local stamp="$VENV/.installed-$TF_EXTRA"
  if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
  fi
  if [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ]; then
    "$PY" -m pip install --quiet --upgrade pip
    "$PY" -m pip install --quiet -e ".[$TF_EXTRA,test]"
    touch "$stamp"
  fi
}

job="${1:-mnist}"
[ $# -gt 0 ] && shift
case "$job" in
  mnist|cifar10|dogcat)
    install
    exec "$PY" -m "$job.main" "$@" ;;
  cifar10_tfrecords)
    install
    exec "$PY" -m cifar10.generate_cifar10_tfrecords "$@" ;;
  test)
    install
    "$VENV/bin/ruff" check .   # lint first: line length, unused imports (ruff.toml)
    exec "$PY" -m pytest -q tests "$@" ;;
  bench)
    install
    name="${1:?usage: ./run.sh bench NAME [flags]}"
    shift
    exec "$PY" "benchmarks/$name.py" "$@" ;;
  install)
    install ;;
  *)
    sed -n '2,12p' "$0" >&2
    exit 2 ;;
esac
