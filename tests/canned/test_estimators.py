"""Each premade estimator against tf.estimator 2.15 (numbers in tf215_reference.json): from the same
initial weights, the same weights after 3 steps, the same eval metrics and prediction keys; then on two
logical CPU towers: loss falls, training resumes, the export classifies as predict() does."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common import canned
from tests import DATA, models
from tests.canned import reference
from tests.export_signatures import describe


@pytest.mark.parametrize("case", sorted(reference.CASES))
def test_weights_metrics_and_predictions_match_tf_estimator_2_15(case, tmp_path):
    want = reference.CASES[case]
    start = {}
    if not case.startswith("base"):  # (the baseline starts at zeros, and takes no warm start)
        start["warm_start_from"] = reference.write_initial_checkpoint(case, str(tmp_path / "initial" / "ckpt-0"))
    estimator, features, labels = reference.estimator(case, model_dir=str(tmp_path / "model"), **start)
    estimator.train(reference.train_input(features, labels), steps=3)
    # Keras 3's Adam rounds its float32 step otherwise than TF's ApplyAdam kernel did (up to 1e-6 here)
    atol = 2e-6 if "adam" in case else 1e-7
    for name, value in want["after3"].items():
        np.testing.assert_allclose(estimator.get_variable_value(name), value, rtol=1e-5, atol=atol, err_msg=name)
    got = estimator.evaluate(reference.eval_input(features, labels))
    assert sorted(got) == sorted(want["eval"])
    for key, value in want["eval"].items():
        assert got[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key
    predictions = next(iter(estimator.predict(reference.predict_input(features))))
    assert sorted(predictions) == want["prediction_keys"]


def test_variable_names_are_tf_estimators():
    assert sorted(reference.CASES["wd2"]["after3"]) == [
        "dnn/hiddenlayer_0/bias", "dnn/hiddenlayer_0/kernel", "dnn/logits/bias", "dnn/logits/kernel",
        "linear/linear_model/bias_weights", "linear/linear_model/c/weights"]


def test_wide_and_deep_on_two_towers_learns_resumes_and_serves_classify(tmp_path):
    a, b, c = reference.columns()
    rng = np.random.RandomState(0)
    n = 256
    features = {"a": rng.randn(n).astype(np.float32), "b": rng.randn(n).astype(np.float32),
                "c": rng.choice(["x", "y", "z"], n)}
    labels = ((features["a"] + (features["c"] == "x")) > 0.5).astype(np.int64)

    def make():
        return canned.DNNLinearCombinedClassifier(
            model_dir=str(tmp_path / "model"), linear_feature_columns=[c],
            dnn_feature_columns=[a, b, tf.feature_column.embedding_column(c, 2)], dnn_hidden_units=[8],
            dnn_optimizer="Adam", config=common.RunConfig(tf_random_seed=3, device_plan=models.plan(2)))

    estimator = make()
    first = estimator.evaluate(reference.eval_input(features, labels, 64))["loss"]
    estimator.train(reference.train_input(features, labels, 64), steps=60)
    estimator = make()  # a new process's estimator resumes from the model dir
    estimator.train(reference.train_input(features, labels, 64), steps=20)
    metrics = estimator.evaluate(reference.eval_input(features, labels, 64))
    assert metrics["global_step"] == 80 and metrics["loss"] < first - 0.1
    assert "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights" in \
        estimator.get_variable_names()

    spec = tf.feature_column.make_parse_example_spec([a, b, c])
    export_dir = estimator.export_saved_model(str(tmp_path / "export"),
                                              common.build_parsing_serving_input_receiver_fn(spec))
    loaded = tf.saved_model.load(export_dir)
    assert {"serving_default", "classification", "regression", "predict"} <= set(loaded.signatures)
    rows = [tf.train.Example(features=tf.train.Features(feature={
        "a": tf.train.Feature(float_list=tf.train.FloatList(value=[features["a"][i]])),
        "b": tf.train.Feature(float_list=tf.train.FloatList(value=[features["b"][i]])),
        "c": tf.train.Feature(bytes_list=tf.train.BytesList(value=[features["c"][i].encode()]))}))
        .SerializeToString() for i in range(4)]
    served = loaded.signatures["classification"](inputs=tf.constant(rows))
    predicted = list(estimator.predict(reference.predict_input({k: v[:4] for k, v in features.items()}, 4)))
    np.testing.assert_allclose(served["scores"].numpy(), [p["probabilities"] for p in predicted], rtol=1e-5)
    assert served["classes"].numpy().tolist() == [[b"0", b"1"]] * 4


def test_tpu_embedding_columns_on_two_towers_share_one_table_and_serve(tmp_path):
    """TensorFlow's TPU embedding columns (one shared by two features) in a DNNClassifier off a TPU: one table
    shared by both features' towers, trained, resumed and exported."""
    features, labels = reference.ALL_FEATURES, reference.LABELS3

    def make():
        return canned.DNNClassifier([4], reference.tpu_embedding_columns(), n_classes=3,
                                    model_dir=str(tmp_path / "model"), optimizer="Adam",
                                    config=common.RunConfig(tf_random_seed=3, device_plan=models.plan(2)))

    estimator = make()
    first = estimator.evaluate(reference.eval_input(features, labels))["loss"]
    estimator.train(reference.train_input(features, labels), steps=30)
    estimator = make()
    estimator.train(reference.train_input(features, labels), steps=10)
    metrics = estimator.evaluate(reference.eval_input(features, labels))
    assert metrics["global_step"] == 40 and metrics["loss"] < first - 0.1
    assert [name for name in estimator.get_variable_names() if "shared" in name] == ["i_k_shared_embedding"]
    spec = {"a": tf.io.FixedLenFeature([1], tf.float32), "b": tf.io.FixedLenFeature([1], tf.float32),
            "c": tf.io.FixedLenFeature([1], tf.string), "i": tf.io.FixedLenFeature([1], tf.int64),
            "k": tf.io.FixedLenFeature([1], tf.int64)}
    export_dir = estimator.export_saved_model(str(tmp_path / "export"),
                                              common.build_parsing_serving_input_receiver_fn(spec))
    rows = [tf.train.Example(features=tf.train.Features(feature={
        **{key: tf.train.Feature(float_list=tf.train.FloatList(value=[features[key][i]])) for key in "ab"},
        "c": tf.train.Feature(bytes_list=tf.train.BytesList(value=[features["c"][i].encode()])),
        **{key: tf.train.Feature(int64_list=tf.train.Int64List(value=[features[key][i]])) for key in "ik"}}))
        .SerializeToString() for i in range(4)]
    served = tf.saved_model.load(export_dir).signatures["classification"](inputs=tf.constant(rows))
    predicted = list(estimator.predict(reference.predict_input({k: v[:4] for k, v in features.items()}, 4)))
    np.testing.assert_allclose(served["scores"].numpy(), [p["probabilities"] for p in predicted], rtol=1e-5)


def test_bad_arguments_are_named():
    a, _, _ = reference.columns()
    with pytest.raises(ValueError, match="hidden_units"):
        canned.DNNClassifier([], [a])
    with pytest.raises(ValueError, match="feature_columns is empty"):
        canned.LinearRegressor([])
    with pytest.raises(ValueError, match="Either linear_feature_columns or dnn_feature_columns"):
        canned.DNNLinearCombinedClassifier()
    with pytest.raises(ValueError, match="label_vocabulary has 2 entries; it needs n_classes = 3"):
        canned.DNNClassifier([2], [a], n_classes=3, label_vocabulary=["p", "q"])
    with pytest.raises(ValueError, match="loss_reduction='none'"):
        canned.LinearClassifier([a], loss_reduction="none")
    with pytest.raises(NotImplementedError, match="YDF"):
        canned.BoostedTreesClassifier([a], n_batches_per_layer=1)


def test_string_labels_without_a_vocabulary_are_refused_by_name(tmp_path):
    estimator, features, _ = reference.estimator("dnn3", model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="label_vocabulary"):
        estimator.train(reference.train_input(features, np.array(["p"] * 8)), steps=1)
    assert not tf.io.gfile.glob(str(tmp_path / "model.ckpt-1*"))


def _served(described):
    """What a caller of the SavedModel sees (the tensors' names inside the graph left out, and the init op TF 2
    SavedModels list among their signatures, which TensorFlow Serving does not serve)."""
    return [{"tags": sorted(graph["tags"]), "signatures": {
        key: {"method_name": signature["method_name"],
              **{side: {name: (tensor["dtype"], tensor["shape"]) for name, tensor in signature[side].items()}
                 for side in ("inputs", "outputs")}}
        for key, signature in graph["signatures"].items() if key != "__saved_model_init_op"}}
        for graph in described]


_EXPORTED = [("DNNRegressor_label_dimension_2", lambda columns, config: canned.DNNRegressor(
                 hidden_units=[4], feature_columns=columns, label_dimension=2, config=config), 2, None),
             ("DNNRegressor_label_dimension_1", lambda columns, config: canned.DNNRegressor(
                 hidden_units=[4], feature_columns=columns, label_dimension=1, config=config), 1, None),
             ("DNNClassifier_n_classes_3", lambda columns, config: canned.DNNClassifier(
                 hidden_units=[4], feature_columns=columns, n_classes=3, config=config), 1, 3)]


@pytest.mark.parametrize("name,make,label_dimension,classes", _EXPORTED, ids=[case[0] for case in _EXPORTED])
def test_exports_serve_what_tf_estimator_2_15_exported(name, make, label_dimension, classes, tmp_path):
    """Signatures, method names, tags and tensor specs, with a tf.Example parsing receiver and a raw one, as
    TF 2.15 exported the same estimators (recorded by tests/data/tf215_exports/record.py): a multi-output
    regressor serves regress under serving_default and regression; a raw receiver serves predict alone."""
    with open(os.path.join(DATA, "tf215_exports", "exports.json")) as recorded:
        theirs = json.load(recorded)[name]
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    estimator = make(columns, common.RunConfig(model_dir=str(tmp_path / "model"), tf_random_seed=0))
    rng = np.random.RandomState(0)
    x = rng.rand(32, 3).astype(np.float32)
    y = rng.randint(0, classes, (32, 1)).astype(np.int64) if classes else rng.rand(32, label_dimension).astype(
        np.float32)
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8), steps=5)
    receivers = {"parsing": common.build_parsing_serving_input_receiver_fn(
                     tf.feature_column.make_parse_example_spec(columns)),
                 "raw": common.build_raw_serving_input_receiver_fn({"x": common.placeholder(tf.float32, [None, 3])})}
    for kind, receiver in receivers.items():
        ours = describe(estimator.export_saved_model(str(tmp_path / f"export_{kind}"), receiver))
        assert _served(ours) == _served(theirs[kind]), kind
