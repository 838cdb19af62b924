"""The serving contract of estimator exports: placeholder and parsing receivers,
export_outputs as named signatures with TensorFlow Serving method names."""

import os

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

import common
from common.export import receivers
from tests import models

FEATURES, LABELS = models.blobs(128)
FEATURE_SPEC = {"x": tf.io.FixedLenFeature([4], tf.float32)}
CLASS_NAMES = tf.constant(["zero", "one", "two"])


def serving_fn(features, labels, mode, params):
    spec = models.classifier_fn(features["x"] if isinstance(features, dict) else features, labels, mode, params)
    if mode != common.ModeKeys.PREDICT:
        return spec
    probabilities = spec.predictions["probabilities"]
    classes = tf.tile(CLASS_NAMES[tf.newaxis], [tf.shape(probabilities)[0], 1])
    outputs = params.get("outputs", "classify")
    if outputs == "classify":
        export_outputs = {"serving_default": common.ClassificationOutput(scores=probabilities, classes=classes),
                          "predict": common.PredictOutput(spec.predictions)}
    elif outputs == "regress":
        export_outputs = {"value": common.RegressionOutput(tf.reduce_max(probabilities, axis=1))}
    else:
        export_outputs = outputs
    return spec._replace(export_outputs=export_outputs)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("model")
    est = common.Estimator(serving_fn, str(model_dir), params={"hidden": 8})
    est.train(models.train_input(FEATURES, LABELS, 32), steps=20)
    return est


def _examples(features):
    return tf.constant([tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})).SerializeToString() for row in features])


def _methods(export_dir):
    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved_model.ParseFromString(f.read())
    return {name: (sig.method_name, sorted(sig.inputs))
            for name, sig in saved_model.meta_graphs[0].signature_def.items() if not name.startswith("__")}


def _predicted_classes(est, features):
    return np.array([p["classes"] for p in est.predict(models.eval_input(features, LABELS[:len(features)], 8))])


def test_a_parsing_receiver_answers_classify_with_the_classes_predict_gives(trained, tmp_path):
    export_dir = trained.export_saved_model(
        str(tmp_path), common.build_parsing_serving_input_receiver_fn(FEATURE_SPEC))
    assert _methods(export_dir) == {"serving_default": ("tensorflow/serving/classify", ["inputs"]),
                                    "predict": ("tensorflow/serving/predict", ["examples"])}
    served = tf.saved_model.load(export_dir)
    answer = served.signatures["serving_default"](inputs=_examples(FEATURES[:16]))
    best = np.argmax(answer["scores"].numpy(), axis=1)
    assert [name.decode() for name in answer["classes"].numpy()[np.arange(16), best]] == [
        ["zero", "one", "two"][c] for c in _predicted_classes(trained, FEATURES[:16])]
    predicted = served.signatures["predict"](examples=_examples(FEATURES[:16]))
    np.testing.assert_array_equal(predicted["classes"].numpy(), _predicted_classes(trained, FEATURES[:16]))


def test_a_receiver_fn_that_transforms_a_parsing_receivers_features_serves_them(trained, tmp_path):
    """TFX trainers' receiver fn: the parsing receiver's features read, transformed (tf.Transform's place), and
    served from its receiver tensors."""
    def serving_input_receiver_fn():
        raw = common.build_parsing_serving_input_receiver_fn(FEATURE_SPEC)()
        transformed = {"x": raw.features["x"] * 2.0}
        return common.ServingInputReceiver(transformed, raw.receiver_tensors)

    export_dir = trained.export_saved_model(str(tmp_path), serving_input_receiver_fn)
    predicted = tf.saved_model.load(export_dir).signatures["predict"](examples=_examples(FEATURES[:16]))
    np.testing.assert_array_equal(predicted["classes"].numpy(), _predicted_classes(trained, FEATURES[:16] * 2.0))


def test_a_regression_output_is_the_regress_method_and_also_the_default(trained, tmp_path):
    est = common.Estimator(serving_fn, trained.model_dir, params={"hidden": 8, "outputs": "regress"})
    export_dir = est.export_saved_model(str(tmp_path), common.build_parsing_serving_input_receiver_fn(FEATURE_SPEC))
    assert _methods(export_dir) == {"serving_default": ("tensorflow/serving/regress", ["inputs"]),
                                    "value": ("tensorflow/serving/regress", ["inputs"])}
    answer = tf.saved_model.load(export_dir).signatures["value"](inputs=_examples(FEATURES[:4]))["outputs"]
    probabilities = np.stack([p["probabilities"] for p in est.predict(models.eval_input(FEATURES[:4], LABELS[:4], 4))])
    np.testing.assert_allclose(answer.numpy(), probabilities.max(axis=1), rtol=1e-6)


def test_a_placeholder_receiver_with_ops_and_an_alternative_serves_what_predict_gives(trained, tmp_path):
    def serving_input_receiver_fn():
        pixels = tf.compat.v1.placeholder(tf.float32, [None, 2, 2], name="pixels")
        flat = tf.reshape(pixels, [-1, 4]) * 2.0
        return common.ServingInputReceiver({"x": flat}, {"pixels": pixels},
                                           receiver_tensors_alternatives={"flat": {"flat": flat}})

    export_dir = trained.export_saved_model(str(tmp_path), serving_input_receiver_fn)
    methods = _methods(export_dir)
    # the classify default over float inputs is left out, as tf.estimator 2.15 left it out
    assert "serving_default" not in methods and "flat" not in methods
    assert methods["predict"] == ("tensorflow/serving/predict", ["pixels"])
    assert methods["flat:predict"] == ("tensorflow/serving/predict", ["flat"])
    served = tf.saved_model.load(export_dir)
    expected = _predicted_classes(trained, FEATURES[:8] * 2.0)
    by_pixels = served.signatures["predict"](pixels=tf.reshape(FEATURES[:8], [-1, 2, 2]))["classes"]
    by_flat = served.signatures["flat:predict"](flat=FEATURES[:8] * 2.0)["classes"]
    np.testing.assert_array_equal(by_pixels.numpy(), expected)
    np.testing.assert_array_equal(by_flat.numpy(), expected)


def test_placeholders_made_eagerly_are_specs_for_a_raw_receiver(trained, tmp_path):
    x = common.placeholder(tf.float32, [None, 4], name="x")
    assert isinstance(x, tf.TensorSpec)
    export_dir = trained.export_saved_model(str(tmp_path), common.build_raw_serving_input_receiver_fn({"x": x}))
    served = tf.saved_model.load(export_dir)
    np.testing.assert_array_equal(served.signatures["predict"](x=FEATURES[:8])["classes"].numpy(),
                                  _predicted_classes(trained, FEATURES[:8]))


@pytest.mark.parametrize("outputs,message", [
    ({"a": common.PredictOutput(tf.zeros([1])), "b": common.PredictOutput(tf.zeros([1]))},
     "export_outputs has 2 outputs \\(a, b\\) and none is 'serving_default'"),
    ({"serving_default": "probabilities"}, r"export_outputs\['serving_default'\] is a str"),
])
def test_export_outputs_that_cannot_be_served_are_refused_by_name(trained, tmp_path, outputs, message):
    est = common.Estimator(serving_fn, trained.model_dir, params={"hidden": 8, "outputs": outputs})
    with pytest.raises(ValueError, match=message):
        est.export_saved_model(str(tmp_path), common.build_parsing_serving_input_receiver_fn(FEATURE_SPEC))
    assert os.listdir(tmp_path) == []


def test_a_shape_the_receiver_set_reaches_model_fn_after_pruning():
    def png_receiver():  # a TF1 program's: decoded images have no static channels until set_shape says 1
        pngs = tf.compat.v1.placeholder(tf.string, [None], name="pngs")
        images = tf.compat.v1.map_fn(lambda png: tf.image.decode_image(png, channels=1), pngs, dtype=tf.uint8)
        images.set_shape([None, None, None, 1])
        resized = tf.compat.v1.image.resize_images(tf.cast(images, tf.float32), [4, 4])
        return common.ServingInputReceiver({"x": resized}, {"pngs": pngs})

    inputs = receivers.serving_inputs(png_receiver)[receivers.DEFAULT_SIGNATURE]
    traced = tf.function(inputs.features_fn).get_concrete_function({"pngs": inputs.specs["pngs"]})
    assert traced.structured_outputs["x"].shape.as_list() == [None, 4, 4, 1]
    png = tf.io.encode_png(tf.fill([4, 4, 1], tf.constant(200, tf.uint8)))
    served = inputs.features_fn({"pngs": tf.stack([png, png])})["x"]
    assert served.shape == (2, 4, 4, 1) and float(tf.reduce_min(served)) == 200.0
