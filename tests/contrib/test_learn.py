"""tf.contrib.learn's Experiment, learn_runner.run and RunConfig on this project's Estimator."""

import os
import types

import numpy as np
import pytest
import tensorflow as tf

import common
import common.adapters.session_run_hooks
from common.contrib import learn
from common.contrib.hparams import HParams
from common.tf1 import train as tf1_train

X = np.arange(8, dtype=np.float32).reshape(8, 1) / 8
Y = 3 * X


def model_fn(features, labels, mode, params):
    weight = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    if mode == common.ModeKeys.PREDICT:  # (served: the request's features, by name)
        return common.EstimatorSpec(mode, predictions=tf.matmul(features["x"], weight))
    loss = tf.reduce_mean(tf.square(tf.matmul(features, weight) - labels))
    return common.EstimatorSpec(mode, loss=loss, eval_metric_ops={"w": common.tf1.metrics.mean(weight)},
                                train_op=tf1_train.GradientDescentOptimizer(params.rate).minimize(loss))


def train_input():
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(4)


def eval_input():
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)


class CountingHook(common.adapters.session_run_hooks.SessionRunHook):
    def __init__(self):
        self.runs = 0

    def after_run(self, run_context, run_values):
        self.runs += 1


def test_learn_runner_runs_the_experiments_train_and_evaluate_as_the_official_example_did(tmp_path):
    hook = CountingHook()

    def experiment_fn(run_config, hparams):
        estimator = common.Estimator(model_fn, config=run_config, params=hparams)
        experiment = learn.Experiment(estimator, train_input, eval_input, train_steps=5, eval_steps=1)
        experiment.extend_train_hooks([hook])
        return experiment

    config = learn.RunConfig(model_dir=str(tmp_path), session_config=None, save_checkpoints_steps=2)
    metrics, exports = learn.run(experiment_fn, run_config=config, hparams=HParams(rate=0.5))
    assert metrics["global_step"] == 5 and exports == []
    assert hook.runs == 5
    assert metrics["w"] > 0  # trained towards 3
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")
    assert learn.run(experiment_fn, run_config=config, hparams=HParams(rate=0.5), schedule="test")["global_step"] == 6
    with pytest.raises(ValueError, match="schedule 'fly' is not one of the Experiment's"):
        learn.run(experiment_fn, run_config=config, hparams=HParams(rate=0.5), schedule="fly")


def test_what_contrib_learn_did_that_has_no_counterpart_is_refused_by_name(tmp_path):
    estimator = common.Estimator(model_fn, str(tmp_path), params=HParams(rate=0.1))
    with pytest.raises(ValueError, match="eval_metrics must be None with a tf.estimator Estimator"):
        learn.Experiment(estimator, train_input, eval_input, eval_metrics={"a": None})
    with pytest.raises(NotImplementedError, match="checkpoint_and_export and saving_listeners are not supported"):
        learn.Experiment(estimator, train_input, eval_input, checkpoint_and_export=True)


class _Schedules(learn.Experiment):
    """An Experiment that says which schedule learn_runner ran."""

    def train(self, delay_secs=None):
        return "train"

    def run_std_server(self):
        return "run_std_server"

    def train_and_evaluate(self):
        return "train_and_evaluate"


@pytest.mark.parametrize("task, schedule", [("ps", "run_std_server"), ("worker", "train"),
                                            ("chief", "train_and_evaluate"), ("master", "train_and_evaluate")])
def test_learn_runner_gives_each_task_of_a_parameter_server_job_contribs_schedule(tmp_path, task, schedule):
    """The official CIFAR-10 example's multi-host default (asynchronous, ps tasks, "master" in its README): the
    ps tasks serve, the workers train (serving the chief here), the chief trains and evaluates. (The config
    stands for a RunConfig of such a TF_CONFIG; a real one's chief would wait for its tasks.)"""
    estimator = common.Estimator(model_fn, str(tmp_path), params=HParams(rate=0.1))
    config = types.SimpleNamespace(task_type=task, num_ps_replicas=1)
    assert learn.run(lambda config, hparams: _Schedules(estimator, train_input, eval_input),
                     run_config=config) == schedule


def test_contribs_run_config_keeps_its_settings_and_defaults():
    config = learn.RunConfig(model_dir="/tmp/x", tf_random_seed=3, keep_checkpoint_max=2, num_cores=4)
    assert (config.model_dir, config.tf_random_seed, config.keep_checkpoint_max) == ("/tmp/x", 3, 2)
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps) == (600, None)
    assert learn.RunConfig(save_checkpoints_steps=7).save_checkpoints_secs is None


def test_maybe_download_is_still_where_earlier_upgrades_wrote_it(tmp_path):
    (tmp_path / "data.bin").write_bytes(b"local")
    assert learn.maybe_download("data.bin", str(tmp_path), "http://unused.invalid/x") == str(tmp_path / "data.bin")


def test_contribs_run_config_is_a_class_programs_subclass_and_replace_keeps_the_subclass(tmp_path):
    class RunConfig(learn.RunConfig):  # the official CIFAR-10 example's own subclass
        def uid(self, whitelist=None):
            return "uid"

    config = RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=3)
    replaced = config.replace(keep_checkpoint_max=1)
    assert isinstance(replaced, RunConfig) and replaced.uid() == "uid"
    assert (replaced.model_dir, replaced.save_checkpoints_steps, replaced.keep_checkpoint_max) == (str(tmp_path), 3, 1)
    est = common.Estimator(model_fn, config=config, params=HParams(rate=0.1))
    est.train(train_input, steps=1)
    assert est.config.uid() == "uid"


def test_input_fn_ops_give_model_fn_a_tensor_or_a_list_of_tensors_as_contrib_did(tmp_path):
    def tensor_model_fn(features, labels, mode):  # (features: one tensor in every mode)
        weight = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.ones_initializer())
        predictions = tf.matmul(tf.reshape(features, [-1, 1]), weight)
        if mode == common.ModeKeys.PREDICT:
            return common.EstimatorSpec(mode, predictions=predictions)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss))

    estimator = common.Estimator(tensor_model_fn, str(tmp_path))
    estimator.train(train_input, steps=1)
    for make_features in (lambda rows: rows, lambda rows: [rows]):  # (tensorflow-without-a-phd's [tf.cast(...)])
        def serving_input_fn():
            rows = common.placeholder(tf.float32, [None, 1], name="x")
            return learn.InputFnOps(make_features(2 * rows), None, {"x": rows})

        path = estimator.export_saved_model(str(tmp_path / "export"), serving_input_fn)
        served = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant([[1.5]]))
        np.testing.assert_allclose(served["output"].numpy(), [[3.0]])


def test_an_export_strategy_exports_after_the_evaluation_under_export_servo(tmp_path):
    def serving_input_fn():  # contrib's InputFnOps(features, labels, default_inputs)
        rows = common.placeholder(tf.float32, [None, 1], name="x")
        return learn.InputFnOps({"x": rows}, None, {"x": rows})

    def experiment_fn(run_config, hparams):
        estimator = common.Estimator(model_fn, config=run_config, params=hparams)
        return learn.Experiment(estimator, train_input, eval_input, train_steps=2, eval_steps=1,
                                export_strategies=[learn.make_export_strategy(export_input_fn=serving_input_fn,
                                                                              exports_to_keep=1)])  # (1.0's name)

    metrics, exports = learn.run(experiment_fn, run_config=learn.RunConfig(model_dir=str(tmp_path)),
                                 hparams=HParams(rate=0.1))
    (path,) = exports
    assert os.path.dirname(path) == os.path.join(str(tmp_path), "export", "Servo") and metrics["global_step"] == 2
    served = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant([[2.0]]))
    assert list(served) == ["output"]
    with pytest.raises(ValueError, match="give serving_input_fn \\(or, as TensorFlow 1.0 named it, export_input_fn"):
        learn.make_export_strategy(serving_input_fn, export_input_fn=serving_input_fn)
