#!/usr/bin/env bash
# On the lent GPU machine, from the project root, once every part made by
# pack.sh has been carried there: unpacks them into /tmp/tfgpu/site, points
# the CUDA 12 library names TensorFlow 2.21 opens at the machine's CUDA 13
# libraries (/tmp/tfgpu/lib), writes /tmp/tfgpu/env.sh for later calls on
# the same machine, and runs check_tf_gpu.py. The README's GPU section has
# the whole procedure.
#
#   bash benchmarks/gpu/setup_device.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=/tmp/tfgpu
python=${PYTHON:-python3}

mkdir -p "$root/parts" "$root/lib"
if compgen -G ".gpu_carry/part_*" >/dev/null; then mv -f .gpu_carry/part_* "$root/parts/"; fi
echo "parts: $(ls "$root/parts" | tr '\n' ' ')"
rm -rf "$root/site"
if command -v xz >/dev/null; then  # xz decompresses pack.sh's blocks on all cores; Python's lzma on one
    cat "$root"/parts/part_* | xz -T0 -dc | tar -C "$root" -xf -
else
    cat "$root"/parts/part_* | "$python" -c "
import sys, tarfile
tarfile.open(fileobj=sys.stdin.buffer, mode='r|xz').extractall(sys.argv[1], filter='fully_trusted')" "$root"
fi
echo "unpacked in ${SECONDS} s"

# The machine's CUDA: its toolkit (ptxas, and libdevice for XLA) and the nvidia-* wheels of its Python.
cuda=
for candidate in /usr/local/cuda "$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || echo /)")")")"; do
    if [ -d "$candidate/nvvm/libdevice" ]; then cuda=$candidate; break; fi
done
echo "CUDA toolkit: ${cuda:-none found (XLA will not compile for the GPU)}"
mapfile -t dirs < <({
    if [ -n "$cuda" ]; then
        for d in "$cuda/lib64" "$cuda/extras/CUPTI/lib64"; do [ -d "$d" ] && echo "$d"; done
    fi
    [ -d /usr/local/nvidia/lib64 ] && echo /usr/local/nvidia/lib64
    "$python" -c "
import glob, os, site
for s in site.getsitepackages():
    for d in sorted(glob.glob(os.path.join(s, 'nvidia', '**', 'lib'), recursive=True)):
        print(d)"
})

# TensorFlow 2.21 was built for CUDA 12.5 and opens these names; CUDA 13's libraries keep the
# API TensorFlow calls under a newer soname. cudart is carried (pack.sh) since it does not.
shim() {  # WANTED CANDIDATE...: link WANTED to the first candidate found in dirs
    local wanted=$1 name d
    shift
    for name in "$@"; do
        for d in "${dirs[@]}"; do
            if [ -e "$d/$name" ]; then
                ln -sf "$d/$name" "$root/lib/$wanted"
                echo "shim $wanted -> $d/$name"
                return 0
            fi
        done
    done
    echo "shim $wanted: none of $* in ${dirs[*]}"
}
shim libcublas.so.12 libcublas.so.12 libcublas.so.13
shim libcublasLt.so.12 libcublasLt.so.12 libcublasLt.so.13
shim libcufft.so.11 libcufft.so.11 libcufft.so.12
shim libcusolver.so.11 libcusolver.so.11 libcusolver.so.12
shim libcusparse.so.12 libcusparse.so.12
shim libcudnn.so.9 libcudnn.so.9
shim libcupti.so.12 libcupti.so.12 libcupti.so.13
shim libnccl.so.2 libnccl.so.2

library_path=$root/site/nvidia/cuda_runtime/lib:$root/lib
for d in "${dirs[@]}"; do library_path+=:$d; done
cat >"$root/env.sh" <<EOF
export PYTHON=$python
export PYTHONPATH=$root/site\${PYTHONPATH:+:\$PYTHONPATH}
export LD_LIBRARY_PATH=$library_path\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export TF_CPP_MIN_LOG_LEVEL=\${TF_CPP_MIN_LOG_LEVEL:-1}
EOF
if [ -n "$cuda" ]; then
    printf 'export PATH=%s/bin:$PATH\nexport XLA_FLAGS="--xla_gpu_cuda_data_dir=%s ${XLA_FLAGS:-}"\n' \
        "$cuda" "$cuda" >>"$root/env.sh"
fi
echo "wrote $root/env.sh:"
cat "$root/env.sh"
# shellcheck source=/dev/null
source "$root/env.sh"
"$python" benchmarks/gpu/check_tf_gpu.py
