"""tf.contrib.predictor.from_saved_model over an Estimator's export: plain values in, numpy arrays out, by
signature; what it cannot feed named."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.contrib import predictor
from common.tf1 import train as tf1_train


def _export(tmp_path):
    def model_fn(features, labels, mode):
        scale = tf.compat.v1.get_variable("scale", [], initializer=tf.compat.v1.constant_initializer(2.0))
        outputs = {"doubled": features["number"] * scale, "shout": tf.strings.join([features["word"], "!"])}
        loss = scale * 0.0
        return common.EstimatorSpec(mode, predictions=outputs, loss=loss,
                                    train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss),
                                    export_outputs={"prediction": common.PredictOutput(outputs)})

    est = common.Estimator(model_fn, str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors(({"number": [1.0], "word": ["a"]}, [0.0])), steps=1)
    receiver = common.build_raw_serving_input_receiver_fn({"number": tf.TensorSpec([None], tf.float32),
                                                           "word": tf.TensorSpec([None], tf.string)})
    return est.export_saved_model(str(tmp_path / "export"), receiver)


def test_a_predictor_calls_a_signature_with_plain_values_and_gives_numpy(tmp_path):
    path = _export(tmp_path)
    predict = predictor.from_saved_model(export_dir=path, signature_def_key="prediction")
    output = predict({"number": [1.5, -2], "word": ["hi", "ho"]})
    assert sorted(output) == ["doubled", "shout"]
    np.testing.assert_array_equal(output["doubled"], np.array([3.0, -4.0], np.float32))
    assert output["shout"].tolist() == [b"hi!", b"ho!"]
    assert sorted(predict.feed_tensors) == ["number", "word"]
    assert sorted(predictor.from_saved_model(path)({"number": [1.0], "word": ["x"]})) == ["doubled", "shout"]


def test_what_a_predictor_cannot_do_is_named(tmp_path):
    path = _export(tmp_path)
    with pytest.raises(ValueError, match="has no signature 'nope'; it has prediction, serving_default"):
        predictor.from_saved_model(path, signature_def_key="nope")
    predict = predictor.from_saved_model(path, signature_def_key="prediction")
    with pytest.raises(ValueError, match=r"takes \['number', 'word'\]; not its inputs: \['x'\]; not fed: \['word'\]"):
        predict({"number": [1.0], "x": [2]})
    with pytest.raises(ValueError, match="from_saved_model: graph is not supported"):
        predictor.from_saved_model(path, graph=tf.Graph())


def test_a_tf1_receivers_derived_inputs_may_be_left_unfed_as_a_session_allowed(tmp_path):
    def model_fn(features, labels, mode):
        weight = tf.compat.v1.get_variable("weight", [], initializer=tf.compat.v1.constant_initializer(3.0))
        outputs = {"y": weight * features["x"] + features["x_2"]}
        loss = weight * 0.0
        return common.EstimatorSpec(mode, predictions=outputs, loss=loss,
                                    train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss))

    def receiver_fn():  # TF1 programs' way: the derived feature put among the receiver tensors
        received = {"x": tf.compat.v1.placeholder(tf.float32, [None])}
        received["x_2"] = tf.square(received["x"])
        return common.ServingInputReceiver(received, received)

    est = common.Estimator(model_fn, str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": [1.0], "x_2": [1.0]}, [0.0])), steps=1)
    path = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
    signature = tf.saved_model.load(path).signatures["serving_default"]
    assert sorted(signature.structured_input_signature[1]) == ["x", "x_2"]  # served as TF1 served it
    predict = predictor.from_saved_model(path)
    np.testing.assert_allclose(predict({"x": [2.0, -1.0]})["y"], [10.0, -2.0])  # x_2 computed: 3x + x^2
    np.testing.assert_allclose(predict({"x": [2.0], "x_2": [0.5]})["y"], [6.5])  # fed, it is taken as given
    with pytest.raises(ValueError, match=r"takes \['x', 'x_2'\] \(or its placeholders alone: \['x'\]\); "
                                         r"not its inputs: \['z'\]; not fed: \['x_2'\]"):
        predict({"x": [1.0], "z": [1.0]})
