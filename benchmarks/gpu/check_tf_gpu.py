"""Does TensorFlow's GPU build compute right on this machine?

    python benchmarks/gpu/check_tf_gpu.py [--allow_cpu]

The GPU build runs here on CUDA libraries it was not built against
(setup_device.sh), so before any figure is taken: prints what TensorFlow
was built for and which GPUs it sees, then checks a convolution and a
matrix product in float32, float16 and bfloat16, eagerly and compiled with
XLA, against float64 on the CPU over the same (rounded) fresh random inputs,
by ||out - ref|| / ||ref||. float32 may run as TF32 on the matrix units
(TensorFlow's default), hence its bound. Exit 1 on any failed check, or when
no GPU is found (--allow_cpu runs the checks on the CPU, to try this script
on a machine without one).
"""

import numpy as np
import tensorflow as tf
from absl import app, flags

flags.DEFINE_boolean("allow_cpu", False, "Run the checks on the CPU when TensorFlow finds no GPU.")

# Bounds on the relative error: TF32 near 3e-4, half precision near its unit roundoff.
TOLERANCE = {tf.float32: 2e-3, tf.float16: 1e-2, tf.bfloat16: 3e-2}


def conv2d(x, w):
    return tf.nn.conv2d(x, w, strides=1, padding="SAME")


# name, operation, input shapes (ResNet-44's widest convolution at batch 128; a square product).
CASES = [("conv2d", conv2d, [(128, 8, 8, 64), (3, 3, 64, 64)]),
         ("matmul", tf.matmul, [(1024, 1024), (1024, 1024)])]


def relative_error(out, ref):
    return float(np.linalg.norm(out.astype(np.float64) - ref) / np.linalg.norm(ref))


def check(device, dtype, name, op, shapes, jit, rng):
    """One line of the table; True when the output is finite and within TOLERANCE. op: a tf.function."""
    inputs = [tf.constant(rng.standard_normal(shape), dtype) for shape in shapes]
    with tf.device("/cpu:0"):
        ref = op(*[tf.cast(x, tf.float64) for x in inputs]).numpy()
    with tf.device(device):
        out = op(*inputs).numpy()
    error = relative_error(out, ref)
    ok = bool(np.isfinite(out).all()) and error < TOLERANCE[dtype]
    print(f"{'ok  ' if ok else 'FAIL'} {name:7s} {dtype.name:8s} {'xla' if jit else 'eager':5s} "
          f"relative error {error:.2e} (bound {TOLERANCE[dtype]:.0e}) on {device}")
    return ok


def main(_):
    tf.get_logger().setLevel("ERROR")  # retracing per dtype is meant; the C++ log (library loading) stays
    build = tf.sysconfig.get_build_info()
    print(f"TensorFlow {tf.__version__}, built for CUDA {build.get('cuda_version')}, "
          f"cuDNN {build.get('cudnn_version')}")
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        print(f"{gpu.name}: {tf.config.experimental.get_device_details(gpu)}")
    if not gpus and not flags.FLAGS.allow_cpu:
        print("FAIL: TensorFlow found no GPU (its log above says which library it could not open)")
        return 1
    device = "/gpu:0" if gpus else "/cpu:0"
    rng = np.random.default_rng()
    results = [check(device, dtype, name, tf.function(op, jit_compile=jit), shapes, jit, rng)
               for name, op, shapes in CASES for jit in (False, True) for dtype in TOLERANCE]
    print(f"{sum(results)} of {len(results)} checks passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    app.run(main)
