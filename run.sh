#!/usr/bin/env bash
# Batch-job launcher. Makes .venv and installs the project on first use.
#   ./run.sh                    train MNIST, evaluate on the test set, export (same as ./run.sh mnist)
#   ./run.sh mnist   [flags]    python -m mnist.main [flags]
#   ./run.sh cifar10 [flags]    python -m cifar10.main [flags]
#   ./run.sh cifar10_tfrecords [flags]   python -m cifar10.generate_cifar10_tfrecords [flags]
#   ./run.sh dogcat  [flags]    python -m dogcat.main [flags]
#   ./run.sh test    [pytest args]       lint (ruff), then the test suite
#   ./run.sh smoke                       the oldest supported TensorFlow (SMOKE_TF, default 2.16.2) in .venv-smoke:
#                                        import, MNIST 50 steps with export, the upgrade of tests/programs and one
#                                        of them trained, the towers on 2 logical devices
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
  smoke)
    tf_version="${SMOKE_TF:-2.16.2}"
    SMOKE_VENV="${SMOKE_VENV:-.venv-smoke}"
    [ -x "$SMOKE_VENV/bin/python" ] || python3 -m venv "$SMOKE_VENV"
    "$SMOKE_VENV/bin/python" -m pip install --quiet "tensorflow-cpu==$tf_version" numpy absl-py six tensorboard \
      pytest hypothesis pandas tf-slim
    SPY="$SMOKE_VENV/bin/python"
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
    export PYTHONPATH="$PWD"
    echo "smoke on $("$SPY" -c 'import tensorflow as tf, keras; print("TensorFlow", tf.__version__, "Keras", keras.__version__)' 2>/dev/null)"
    "$SPY" -c "import common; common.Estimator; import common.tf1.train, common.contrib.layers"
    "$SPY" -m mnist.main --train_steps=50 --model_dir="$out/mnist" --eval_every_steps=50
    ls "$out"/mnist/export/*/saved_model.pb
    "$SPY" -m common.upgrade --intree=tests/programs --outtree="$out/programs" --reportfile="$out/report.txt"
    "$SPY" -m pytest -q -p no:cacheprovider \
      "tests/upgrade/test_programs.py::test_the_sequential_program_trains_as_tf_estimator_trained_it" \
      "tests/engine/test_step.py::test_towers_step_equals_one_tower_step[2-GPU]" ;;
  bench)
    install
    name="${1:?usage: ./run.sh bench NAME [flags]}"
    shift
    exec "$PY" "benchmarks/$name.py" "$@" ;;
  install)
    install ;;
  *)
    sed -n '2,15p' "$0" >&2
    exit 2 ;;
esac
