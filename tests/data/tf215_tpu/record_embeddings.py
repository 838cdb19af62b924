"""Records what tf.estimator 2.15's TPUEstimator(use_tpu=False) trained of tests/programs/tf1_tpu_embeddings.py
in 3 steps: every variable's value (its embedding_config_spec unused off a TPU, the tables trained by model_fn's
optimizer). Run from the project root with a tensorflow-cpu==2.15.1 virtualenv's Python:
    python tests/data/tf215_tpu/record_embeddings.py > tests/data/tf215_tpu/embeddings.json
(recorded on 2026-12-07; tests/tpu/test_embedding.py compares the upgraded program with it). The program is
loaded from its file: the tests package imports this project, which needs TensorFlow 2.16 or later."""

import importlib.util
import json
import tempfile

import numpy as np

spec = importlib.util.spec_from_file_location("program", "tests/programs/tf1_tpu_embeddings.py")
program = importlib.util.module_from_spec(spec)
spec.loader.exec_module(program)
values, _ = program.train(tempfile.mkdtemp(), steps=3)
print(json.dumps({name: np.asarray(value).tolist() for name, value in values.items()}))
