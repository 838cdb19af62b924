"""TPUEstimator with use_tpu=False: params["batch_size"] per mode, TPUEstimatorSpec's metric_fn, scaffold_fn
and host_call, on one and two towers, as tf.estimator.tpu ran it off a TPU."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import metrics as tf1_metrics
from common.tf1 import train as tf1_train
from common.tpu import estimator as tpu
from common.tpu import run_config
from common.state import summaries
from tests import DATA, models
from tests.export_signatures import describe

RNG = np.random.RandomState(4)
X = RNG.randn(16, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-1.0], [2.0]], np.float32)).astype(np.float32)


def input_fn(params):
    data = tf.data.Dataset.from_tensor_slices({"x": X, "y": Y})  # labels inside the features, as BERT's
    return data.repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    assert labels is None
    params["seen"].append((mode, params["batch_size"]))
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w)
    if mode == common.ModeKeys.PREDICT:
        return tpu.TPUEstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - features["y"]))
    if mode == common.ModeKeys.EVAL:
        def metric_fn(targets, outputs):
            return {"mse": tf1_metrics.mean_squared_error(targets, outputs)}
        return tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [features["y"], predictions]))
    optimizer = tpu.CrossShardOptimizer(tf1_train.GradientDescentOptimizer(0.1))

    def scaffold_fn():
        params["scaffold_made"].append(True)
        return tf1_train.Scaffold()

    return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss), scaffold_fn=scaffold_fn)


@pytest.mark.parametrize("towers", [1, 2])
def test_use_tpu_false_trains_evaluates_and_predicts_with_the_batch_size_of_each_mode(tmp_path, towers):
    seen, scaffolds = models.SharedLog(), models.SharedLog()
    config = run_config.RunConfig(model_dir=str(tmp_path), device_plan=models.plan(towers),
                                  tpu_config=run_config.TPUConfig(iterations_per_loop=10))
    est = tpu.TPUEstimator(model_fn, config=config, params={"seen": seen, "scaffold_made": scaffolds},
                           use_tpu=False, train_batch_size=16, eval_batch_size=8, predict_batch_size=4)
    est.train(input_fn, max_steps=5)
    w = np.zeros((3, 1))
    for _ in range(5):
        w = w - 0.1 * 2 * X.T.astype(np.float64) @ (X @ w - Y) / len(X)
    np.testing.assert_allclose(est.variable_values()["w"], w, rtol=1e-5)
    results = est.evaluate(input_fn, steps=2)
    np.testing.assert_allclose(results["mse"], np.mean((X @ w - Y) ** 2), rtol=1e-4)
    rows = list(est.predict(lambda params: tf.data.Dataset.from_tensor_slices({"x": X[:6]}).batch(
        params["batch_size"])))
    np.testing.assert_allclose([r["y"] for r in rows], X[:6] @ w, rtol=1e-5)
    assert {(common.ModeKeys.TRAIN, 16), (common.ModeKeys.EVAL, 8), (common.ModeKeys.PREDICT, 4)} <= set(seen)
    assert scaffolds  # scaffold_fn was called


def test_use_tpu_and_a_batch_size_in_params_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="TPUEstimator\\(use_tpu=True\\): this project trains on CPUs and GPUs"):
        tpu.TPUEstimator(model_fn, str(tmp_path), train_batch_size=8)
    with pytest.raises(ValueError, match='params must not hold "batch_size"'):
        tpu.TPUEstimator(model_fn, str(tmp_path), params={"batch_size": 8}, use_tpu=False)
    with pytest.raises(ValueError, match="eval_metrics must be a \\(function, tensors\\) pair"):
        tpu.TPUEstimatorSpec(common.ModeKeys.EVAL, loss=tf.constant(0.0), eval_metrics={"a": 1})


def test_batch_sizes_and_an_input_fn_without_params_are_named_as_tf_estimator_named_them(tmp_path):
    """tf.estimator 2.15 refused an input_fn without params ("required by TPUEstimator"); a batch size of None
    read by input_fn or model_fn was a bare KeyError here, a negative or uneven one trained on."""
    params = {"seen": models.SharedLog(), "scaffold_made": models.SharedLog()}
    for size in (0, -8, 2.5, True):
        with pytest.raises(ValueError, match=f"TPUEstimator\\(train_batch_size={size!r}\\): a batch size must be a "
                                             "positive integer"):
            tpu.TPUEstimator(model_fn, str(tmp_path), params=params, use_tpu=False, train_batch_size=size)
    with pytest.raises(ValueError, match="train_batch_size=9\\) cannot be split evenly over the 2 towers"):
        tpu.TPUEstimator(model_fn, str(tmp_path), params=params, use_tpu=False, train_batch_size=9,
                         config=run_config.RunConfig(device_plan=models.plan(2)))
    est = tpu.TPUEstimator(model_fn, str(tmp_path), params=params, use_tpu=False, train_batch_size=8)
    with pytest.raises(ValueError, match="does not include params argument, required by TPUEstimator to pass batch "
                                         "size as params\\[\"batch_size\"\\]"):
        est.train(lambda: input_fn({"batch_size": 8}), steps=1)
    with pytest.raises(ValueError, match='params\\["batch_size"\\] is read, but TPUEstimator\\(eval_batch_size=None\\) '
                                         "gives none: set eval_batch_size"):
        est.evaluate(input_fn, steps=1)
    assert not os.listdir(tmp_path)  # nothing written by any of them
    est.train(input_fn, steps=1)
    assert est.get_variable_value("global_step") == 1
    numpy_sized = tpu.TPUEstimator(model_fn, str(tmp_path), params=params, use_tpu=False,
                                   train_batch_size=np.int64(8))  # (read from a numpy config, as TF 2.15 took it)
    numpy_sized.train(input_fn, steps=1)
    assert numpy_sized.get_variable_value("global_step") == 2


def _linear_tpu_fn(features, labels, mode, params):
    """tests/data/tf215_tpu/record.py's model_fn, here."""
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    prediction = tf.matmul(features["x"], w) + b
    if mode == common.ModeKeys.PREDICT:
        return tpu.TPUEstimatorSpec(mode, predictions={"pred": prediction})
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def _linear_input_fn(params):
    rng = np.random.RandomState(0)
    x = rng.rand(64, 3).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) + 0.5).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(params["batch_size"], drop_remainder=True)


def test_rates_summaries_log_lines_and_export_tags_are_tf_estimator_2_15s_off_a_tpu(tmp_path, caplog):
    """As TF 2.15's TPUEstimator(use_tpu=False) (tests/data/tf215_tpu/tpu.json): its own hook writes
    global_step/sec and examples/sec every ceil(log_step_count_steps / iterations_per_loop) steps and logs
    them, no "loss = ..." line; the export holds a MetaGraph tagged serve and one tagged serve, tpu."""
    with open(os.path.join(DATA, "tf215_tpu", "tpu.json")) as recorded:
        theirs = json.load(recorded)
    config = run_config.RunConfig(model_dir=str(tmp_path / "model"), save_summary_steps=5, log_step_count_steps=5,
                                  tf_random_seed=0)
    est = tpu.TPUEstimator(use_tpu=False, model_fn=_linear_tpu_fn, config=config, train_batch_size=8,
                           eval_batch_size=8, predict_batch_size=8)
    with caplog.at_level("INFO", logger="tensorflow"):
        est.train(_linear_input_fn, max_steps=20)
    written = summaries.read_scalars(str(tmp_path / "model"))
    for tag in ("global_step/sec", "examples/sec", "loss"):
        assert [step for step, _ in written[tag]] == theirs["scalar_steps"][tag], tag
    np.testing.assert_allclose([value for _, value in written["examples/sec"]],
                               [8 * value for _, value in written["global_step/sec"]], rtol=1e-5)
    lines = [record.getMessage() for record in caplog.records if record.name == "tensorflow"]
    assert sum(line.startswith("global_step/sec: ") for line in lines) == 6
    assert sum(line.startswith("examples/sec: ") for line in lines) == 6
    assert not [line for line in lines if line.startswith("loss = ")]
    receiver = common.build_raw_serving_input_receiver_fn({"x": common.placeholder(tf.float32, [None, 3])})
    exported = describe(est.export_saved_model(str(tmp_path / "export"), receiver))
    assert [(graph["tags"], sorted(set(graph["signatures"]) - {"__saved_model_init_op"})) for graph in exported] == \
        [(graph["tags"], sorted(graph["signatures"])) for graph in theirs["export"]]
    served = tf.saved_model.load(str(tmp_path / "export" / os.listdir(tmp_path / "export")[0]), tags=["serve", "tpu"])
    prediction = served.signatures["serving_default"](x=tf.ones([2, 3]))["pred"]
    assert prediction.shape == (2, 1)


def test_both_exports_turned_off_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="export_to_tpu and export_to_cpu cannot both be False"):
        tpu.TPUEstimator(use_tpu=False, model_fn=_linear_tpu_fn, train_batch_size=8, export_to_tpu=False,
                         export_to_cpu=False)
