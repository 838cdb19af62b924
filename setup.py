"""Estimator-style multi-tower training on TensorFlow 2.

TensorFlow comes through an extra, so a CPU machine never pulls a CUDA
build and the GPU build is asked for by name:
    pip install -e ".[cpu]"    # tensorflow-cpu
    pip install -e ".[gpu]"    # tensorflow[and-cuda]
    pip install -e ".[tf]"     # plain tensorflow (macOS, Windows, or bring your own CUDA)
"""

from setuptools import find_packages, setup

# The range benchmarks/version_matrix.sh ran the suite on (docs/VERSIONS.md); the next minor is untested until
# someone runs it there. Keras: the project reads Keras's private state (common.internals.keras_internals), and
# Keras before 3.10 copied a tf.Variable it wraps, which model_fn's variable registry refuses.
TENSORFLOW = ">=2.16,<2.22"
KERAS = "keras>=3.10,<3.16"

setup(
    name="tower-estimator",
    version="0.1.0",
    description="tf.estimator's workflow with multi-tower data parallelism on TensorFlow 2",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10,<3.13",
    packages=find_packages(include=["common", "common.*", "cifar10", "mnist", "dogcat"]),
    package_data={"mnist": ["data/*.gz", "data/SHA256SUMS"], "common.contrib": ["data/iris.csv"]},
    install_requires=["numpy", "absl-py", "six", "tensorboard>=2.16", KERAS],
    entry_points={"console_scripts": ["estimator-upgrade = common.upgrade.__main__:main"]},
    extras_require={
        "cpu": [f"tensorflow-cpu{TENSORFLOW}"],
        "gpu": [f"tensorflow[and-cuda]{TENSORFLOW}"],
        "tf": [f"tensorflow{TENSORFLOW}"],
        "test": ["pytest", "hypothesis", "ruff", "pandas", "tf-slim"],
    },
)
