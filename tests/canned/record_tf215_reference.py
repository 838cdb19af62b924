"""Records tf215_reference.json's cases with the real tf.estimator: run it with the Python of a virtualenv
holding tensorflow-cpu==2.15.1 (it brings tensorflow-estimator 2.15), from the project root:

    /path/to/tf215/bin/python -m tests.canned.record_tf215_reference [CASE ...]

Each case (all of them when none is named) is trained 3 steps of batch 8 with
RunConfig(tf_random_seed=1). Its initial weights (model.ckpt-0), its weights after the 3 steps (the step
and the Keras optimizers' "training/" slots left out; TF1's slots kept), its eval metrics, its prediction
keys and its export's signature method names replace the case's entry in tf215_reference.json. Not a
test: the tests read what it wrote.
"""

import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

from tests.canned import reference_data

JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf215_reference.json")
CASES = ("dnn3", "dnn2w", "dnnreg", "lin3", "lin2", "linreg", "wd2", "wdreg", "base3_single", "basereg_single",
         "dnnml", "dnnbt", "dnnbloss", "dnn3loss", "linregloss", "dnn3legacyadam", "lin2legacycall", "wdall",
         "wdall_v1", "dnn3vocab", "dnn3tpu")


def _graph_shared_embedding_columns(categorical_columns, dimension):
    """TF1's shared embedding columns, which TensorFlow builds only in graph mode."""
    with tf.Graph().as_default():
        return tf.compat.v1.feature_column.shared_embedding_columns(categorical_columns, dimension)


FLAVOUR = reference_data.Flavour(tf.estimator, tf.compat.v1.estimator, tf.keras.optimizers.legacy.Adam,
                                 _graph_shared_embedding_columns)


def _values(path):
    reader = tf.train.load_checkpoint(path)
    return {name: np.asarray(reader.get_tensor(name)).tolist() for name, _ in tf.train.list_variables(path)
            if not name.startswith("training/") and name != "global_step"}


def _parse_spec(features):
    """A tf.Example spec for the case's features: floats fixed, strings and ints of any length."""
    return {key: tf.io.FixedLenFeature([1], tf.float32) if value.dtype.kind == "f"
            else tf.io.VarLenFeature(tf.string if value.dtype.kind in "US" else tf.int64)
            for key, value in features.items()}


def _signature_methods(export_dir):
    from tensorflow.core.protobuf import saved_model_pb2
    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    return {name: signature.method_name for graph in saved.meta_graphs
            for name, signature in graph.signature_def.items()}


def record(case, work_dir):
    model_dir = os.path.join(work_dir, case)
    estimator, features, labels = reference_data.estimator(
        case, FLAVOUR, model_dir=model_dir, config=tf.estimator.RunConfig(tf_random_seed=1))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(8).repeat(), steps=3)
    metrics = estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(8))
    prediction = next(iter(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(features).batch(8))))
    export_dir = estimator.export_saved_model(
        os.path.join(work_dir, case + "_export"),
        tf.estimator.export.build_parsing_serving_input_receiver_fn(_parse_spec(features)))
    return {"initial": _values(os.path.join(model_dir, "model.ckpt-0")),
            "after3": _values(os.path.join(model_dir, "model.ckpt-3")),
            "eval": {key: int(value) if key == "global_step" else float(value) for key, value in metrics.items()},
            "prediction_keys": sorted(prediction),
            "signatures": _signature_methods(export_dir.decode() if isinstance(export_dir, bytes) else export_dir)}


def main(cases):
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        raise SystemExit(f"unknown cases {unknown}; the cases are {', '.join(CASES)}")
    with open(JSON) as f:
        reference = json.load(f)
    with tempfile.TemporaryDirectory() as work_dir:
        for case in cases or CASES:
            reference["cases"][case] = record(case, work_dir)
            print(case, reference["cases"][case]["eval"], flush=True)
    with open(JSON, "w") as f:
        json.dump(reference, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
