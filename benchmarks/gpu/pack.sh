#!/usr/bin/env bash
# Packs TensorFlow 2.21's GPU build for the lent GPU machine, which has no
# network, Python 3.12 and CUDA 13's libraries but no TensorFlow: run here
# (PyPI reachable), from the project root. Writes .gpu_carry/part_aa,
# part_ab, ...: one xz-compressed tar of a site-packages folder, split so
# that each part travels in one device call beside the working tree (whose
# limit is 64 MiB in all). The README's GPU section says what to do next.
#
#   bash benchmarks/gpu/pack.sh [part size, default 50M: the tree takes about 13 of a call's 64 MiB]
#
# What goes in: TensorFlow's wheel (its C++ headers left out: they only
# build custom ops; two op libraries nothing loads, see below), CUDA 12.5's runtime (cudart keeps versioned symbols, so
# CUDA 13's cannot stand in for it; the other CUDA libraries can, see
# setup_device.sh), and the pure-Python and small binary packages TensorFlow
# and Keras import, at the versions this project is tested with, so that
# the machine's own numpy/protobuf/ml_dtypes cannot differ from what
# TensorFlow was built against.
set -euo pipefail
cd "$(dirname "$0")/../.."
part_size=${1:-50M}
out=.gpu_carry
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

packages=(
    tensorflow==2.21.0 keras==3.15.1 nvidia-cuda-runtime-cu12==12.5.82
    numpy==2.4.6 ml_dtypes==0.6.0 protobuf==7.36.2 optree==0.20.0 namex==0.1.0
    gast==0.7.0 astunparse==1.6.3 google-pasta==0.2.0 termcolor==3.3.0 wrapt==2.5.2
    flatbuffers==25.12.19 opt_einsum==3.4.0 absl-py==2.5.1 six==1.17.0
)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$stage/wheels" "${packages[@]}"

# A wheel is a zip of site-packages; its *.data folders (scripts, headers) are not needed here.
for wheel in "$stage"/wheels/*.whl; do
    python3 -m zipfile -e "$wheel" "$stage/site"
done
# Neither the C++ headers nor two op libraries that nothing loads in `import tensorflow`, Keras fit
# or a training run (StableHLO's Python bindings for tf.mlir; tf2xla's Python op library, whose ops
# libtensorflow_cc registers) are needed: leaving them out saves a part, hence a device call.
rm -rf "$stage"/site/*.data "$stage/site/tensorflow/include" \
    "$stage/site/tensorflow/compiler/mlir/stablehlo/stablehlo_extension.so" \
    "$stage/site/tensorflow/compiler/tf2xla/ops/_xla_ops.so"

rm -rf "$out" && mkdir -p "$out"
tar -C "$stage" -cf - site | xz -T0 -9 | split -b "$part_size" - "$out/part_"
ls -l "$out"
echo "$(ls "$out" | wc -l) parts in $out: carry them to the device as the README's GPU section says"
