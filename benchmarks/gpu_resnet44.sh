#!/usr/bin/env bash
# ResNet-44 at batch 128 on one GPU: 1 tower (variables on the card, so the
# step compiles with XLA by default) and 2 logical towers (the card split in
# two, --split_gpu=2) without XLA and with each tower compiled
# (--jit_compile), float32 and mixed precision, each against Keras 3 fit of
# the same network in the same run. Needs a GPU build of TensorFlow
# (pip install 'tensorflow[and-cuda]==2.21.0').
#
#   bash benchmarks/gpu_resnet44.sh [steps] [dtypes]     # defaults: 300 "float32 float16 bfloat16"
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
dtypes=${2:-float32 float16 bfloat16}
python=${PYTHON:-python}
for dtype in $dtypes; do
    for towers in --num_gpus=1,--variable_strategy=GPU --num_gpus=2,--split_gpu=2,--variable_strategy=GPU \
                  --num_gpus=2,--split_gpu=2,--variable_strategy=GPU,--jit_compile; do
        "$python" benchmarks/cifar10_throughput.py --steps="$steps" --repeats=1 --dtype="$dtype" \
            --main_flags="$towers" | grep cifar10_throughput
    done
done
