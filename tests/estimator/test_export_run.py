"""export_saved_model: model_fn traced once for all of an export's signatures, that trace its PREDICT probe."""

import numpy as np
import tensorflow as tf

import common
from common.tf1 import layers as tf1_layers
from common.tf1 import train as tf1_train
from tests import models
from tests.engine.test_startup import _counting


def test_an_export_traces_model_fn_once_for_all_its_signatures_and_later_exports_not_again(tmp_path):
    """Two export outputs (two signatures over one receiver): model_fn traced once for them, that trace the
    PREDICT probe too (tf.estimator built its export graph once); a later export through the same receiver fn
    (an exporter's, after each evaluation) serves the same functions over the newer checkpoint."""
    def model_fn(features, labels, mode, params):
        spec = models.classifier_fn(features, labels, mode, params)
        if mode != common.ModeKeys.PREDICT:
            return spec
        outputs = {"serving_default": common.PredictOutput(spec.predictions),
                   "scores": common.PredictOutput({"probabilities": spec.predictions["probabilities"]})}
        return spec._replace(export_outputs=outputs)

    features, labels = models.blobs(16)
    counted, calls = _counting(model_fn)
    est = common.Estimator(counted, str(tmp_path / "model"), params={"hidden": 4})
    est.train(models.train_input(features, labels, 8), steps=1)
    receiver = common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 4]))
    first = est.export_saved_model(str(tmp_path / "export"), receiver)
    assert calls[common.ModeKeys.PREDICT] == 2  # the probe is the signatures' one trace (and the .meta's graph)
    loaded = tf.saved_model.load(first)
    assert sorted(loaded.signatures) == ["scores", "serving_default"]
    served = loaded.signatures["scores"](tf.constant(features[:3]))
    assert list(served) == ["probabilities"] and served["probabilities"].shape == (3, 3)
    est.train(models.train_input(features, labels, 8), steps=1)
    second = est.export_saved_model(str(tmp_path / "export"), receiver)
    assert calls[common.ModeKeys.PREDICT] == 2  # the same receiver: its signatures kept, over the new weights
    again = tf.saved_model.load(second).signatures["scores"](tf.constant(features[:3]))["probabilities"]
    expected = [p["probabilities"] for p in est.predict(models.eval_input(features[:3], labels[:3], 3))]
    np.testing.assert_allclose(again.numpy(), expected, rtol=1e-6)
    assert not np.allclose(again.numpy(), served["probabilities"].numpy())  # (the new checkpoint's)


def test_a_parsing_receivers_sparse_features_are_traced_once_for_its_classify_and_predict_signatures(tmp_path):
    """tf.Examples parsed into a SparseTensor and a dense feature: the probe traces model_fn on the parsed
    features' specs, which every signature of the receiver then calls."""
    def model_fn(features, labels, mode):
        words = tf.strings.to_hash_bucket_fast(tf.sparse.to_dense(features["words"], default_value=""), 7)
        bag = tf.reduce_sum(tf.one_hot(words, 7), axis=1)
        logits = tf1_layers.dense(tf.concat([bag, features["x"]], axis=1), 2, name="logits")
        probabilities = tf.nn.softmax(logits)
        if mode == common.ModeKeys.PREDICT:
            classes = tf.tile(tf.constant([[b"no", b"yes"]]), [tf.shape(logits)[0], 1])
            return common.EstimatorSpec(mode, predictions={"probabilities": probabilities}, export_outputs={
                "serving_default": common.ClassificationOutput(scores=probabilities, classes=classes),
                "predict": common.PredictOutput({"probabilities": probabilities})})
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.5).minimize(loss))

    rows = [([b"red", b"apple"], 1.0, 1), ([b"blue"], -1.0, 0), ([b"red"], 0.5, 1), ([b"blue", b"sky"], -0.5, 0)]

    def input_fn():
        words = tf.ragged.constant([r[0] for r in rows]).to_sparse()
        features = {"words": words, "x": tf.constant([[r[1]] for r in rows])}
        return tf.data.Dataset.from_tensors((features, tf.constant([r[2] for r in rows]))).repeat()

    counted, calls = _counting(lambda features, labels, mode, params: model_fn(features, labels, mode))
    est = common.Estimator(counted, str(tmp_path / "model"))
    est.train(input_fn, steps=20)
    receiver = common.build_parsing_serving_input_receiver_fn(
        {"words": tf.io.VarLenFeature(tf.string), "x": tf.io.FixedLenFeature([1], tf.float32)})
    exported = est.export_saved_model(str(tmp_path / "export"), receiver)
    assert calls[common.ModeKeys.PREDICT] == 2  # (the export's one trace, and the .meta's graph)
    examples = [tf.train.Example(features=tf.train.Features(feature={
        "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=r[0])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[r[1]]))})).SerializeToString() for r in rows]
    loaded = tf.saved_model.load(exported)
    assert sorted(loaded.signatures) == ["predict", "serving_default"]
    served = loaded.signatures["predict"](examples=tf.constant(examples))["probabilities"].numpy()
    classified = loaded.signatures["serving_default"](inputs=tf.constant(examples))["scores"].numpy()
    expected = np.array([p["probabilities"] for p in est.predict(lambda: input_fn().take(1))])
    np.testing.assert_allclose(served, expected, rtol=1e-5)
    np.testing.assert_allclose(classified, expected, rtol=1e-5)
    assert (served.argmax(axis=1) == [r[2] for r in rows]).all()
