"""A frozen GraphDef of the inference graph, as TF1 deployments made one: the model dir's export loaded in a TF1
session and its variables made constants by tf.compat.v1.graph_util.convert_variables_to_constants serves what
predict() gives, in a graph with no variables left."""

import numpy as np
import tensorflow as tf

import common
from tests import models


def test_an_exports_inference_graph_freezes_and_serves_what_predict_gives(tmp_path):
    features, labels = models.blobs(64)
    est = common.Estimator(models.classifier_fn, str(tmp_path / "model"), params={"hidden": 4})
    est.train(models.train_input(features, labels, 16), steps=3)
    receiver = common.build_raw_serving_input_receiver_fn({"x": common.placeholder(tf.float32, [None, 4])})
    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver)
    with tf.Graph().as_default() as graph, tf.compat.v1.Session() as session:
        signature = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir).signature_def[
            "serving_default"]
        outputs = {key: value.name for key, value in signature.outputs.items()}
        frozen = tf.compat.v1.graph_util.convert_variables_to_constants(
            session, graph.as_graph_def(), sorted({name.split(":")[0] for name in outputs.values()}))
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        tf.import_graph_def(frozen, name="")
        assert not tf.compat.v1.global_variables()
        served = session.run(outputs["probabilities"], {signature.inputs["x"].name: features[:5]})
    predicted = [row["probabilities"] for row in est.predict(lambda: tf.data.Dataset.from_tensor_slices(
        features[:5]).batch(5))]
    np.testing.assert_allclose(served, predicted, rtol=1e-5)
    assert not {node.op for node in frozen.node} & {"VarHandleOp", "VariableV2"}  # (the call takes constants)
