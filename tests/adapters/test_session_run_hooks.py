"""TF1 SessionRunHooks and CheckpointSaverListeners run as TF1 ran them, steps numbered alike."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.adapters import session_run_hooks as tf1_hooks
from common.tf1 import train as tf1_train
from tests import models

FEATURES, LABELS = models.blobs(64)


class StopAfterThree(tf1_hooks.SessionRunHook):
    """A TF1 hook as estimator code wrote them."""

    def __init__(self):
        self.calls, self.seen = [], []

    def begin(self):
        self.calls.append("begin")
        self._global_step = common.get_global_step()

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        return tf1_hooks.SessionRunArgs({"loss": "loss:0", "step": self._global_step, "lr": "learning_rate"})

    def after_run(self, run_context, run_values):
        self.seen.append((run_values.results["step"], float(run_values.results["loss"])))
        if run_values.results["step"] >= 2:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


class Listener(tf1_hooks.CheckpointSaverListener):
    def __init__(self):
        self.calls = []

    def begin(self):
        self.calls.append("begin")

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", global_step_value))

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def test_a_session_run_hook_sees_tf1_step_numbers_and_stops_training(tmp_path):
    hook, listener = StopAfterThree(), Listener()
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 4},
                           config=common.RunConfig(save_checkpoints_steps=2))
    est.train(models.train_input(FEATURES, LABELS, 16), steps=10, hooks=[hook], saving_listeners=[listener])
    assert hook.calls == ["begin", "after_create_session", "end"]
    assert [step for step, _ in hook.seen] == [0, 1, 2]  # the step each run started from, as in TF1
    assert est.get_variable_value("global_step") == 3
    assert listener.calls == ["begin", ("before_save", 0), ("after_save", 0), ("before_save", 2), ("after_save", 2),
                              ("before_save", 3), ("after_save", 3), ("end", 3)]


def test_a_hook_whose_before_run_asks_for_nothing_hears_after_run_each_step_with_no_results(tmp_path):
    class CountsRuns(tf1_hooks.SessionRunHook):  # TF's migration guide's hook: before_run returns None
        def __init__(self):
            self.results = []

        def after_run(self, run_context, run_values):
            self.results.append(run_values.results)

    hook = CountsRuns()
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 4})
    est.train(models.train_input(FEATURES, LABELS, 16), steps=5, hooks=[hook])
    assert hook.results == [None] * 5


def test_fetches_the_step_does_not_offer_and_session_use_are_refused_by_name(tmp_path):
    class AsksForLogits(tf1_hooks.SessionRunHook):
        def before_run(self, run_context):
            return tf1_hooks.SessionRunArgs(["loss", "logits:0"])

    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 4})
    with pytest.raises(ValueError, match=r"AsksForLogits.before_run asks for logits, which the step does not offer; "
                                         r"it offers loss, learning_rate, batch_accuracy, global_step; or a tensor "
                                         r"model_fn names with tf.identity\(t, name=...\)"):
        est.train(models.train_input(FEATURES, LABELS, 16), steps=2, hooks=[AsksForLogits()])

    class RunsTheSession(tf1_hooks.SessionRunHook):
        def after_create_session(self, session, coord):
            with tf.Graph().as_default():  # (an op of a graph of its own: no session here runs it)
                session.run(tf.constant(1) + 1)

    with pytest.raises(NotImplementedError, match="session.run: TF2 has no session"):
        est.train(models.train_input(FEATURES, LABELS, 16), steps=2, hooks=[RunsTheSession()])

    class FetchesATensor(tf1_hooks.SessionRunHook):
        def before_run(self, run_context):
            return tf1_hooks.SessionRunArgs(tf.constant(1.0))

    with pytest.raises(ValueError, match="a hook asks for a value by name"):
        est.train(models.train_input(FEATURES, LABELS, 16), steps=2, hooks=[FetchesATensor()])

    class FeedsEachRun(tf1_hooks.SessionRunHook):
        def before_run(self, run_context):
            return tf1_hooks.SessionRunArgs("loss", feed_dict={"x:0": [[1.0]]})

    with pytest.raises(NotImplementedError, match=r"FeedsEachRun.before_run: SessionRunArgs\(feed_dict=...\) fed "
                                                  "each TF1 session.run; here each step reads input_fn's batch"):
        est.train(models.train_input(FEATURES, LABELS, 16), steps=2, hooks=[FeedsEachRun()])
    assert est.latest_checkpoint().endswith("model.ckpt-0")  # the refusals trained nothing


def naming_model_fn(features, labels, mode, params):
    """The classifier, naming two tensors as TF1 programs did for their hooks, and
    fetching one by the tensor itself from a hook of its spec."""
    spec = models.classifier_fn(features, labels, mode, params)
    if mode != common.ModeKeys.TRAIN:
        return spec
    probabilities = tf.identity(spec.predictions["probabilities"], name="softmax_tensor")
    tf.identity(spec.loss, name="cross_entropy")
    return spec._replace(training_hooks=[params["spec_hook"](probabilities)])


class Fetches(tf1_hooks.SessionRunHook):
    def __init__(self, fetches):
        self.fetches, self.seen = fetches, []

    def before_run(self, run_context):
        return tf1_hooks.SessionRunArgs(self.fetches)

    def after_run(self, run_context, run_values):
        self.seen.append(run_values.results)


@pytest.mark.parametrize("num_towers", [1, 2])
def test_hooks_fetch_the_whole_batch_of_tensors_model_fn_named(tmp_path, num_towers):
    by_name = Fetches({"p": "softmax_tensor", "ce": "cross_entropy:0", "loss": "loss"})
    by_tensor = []
    params = {"hidden": 4, "learning_rate": 0.0,
              "spec_hook": lambda tensor: by_tensor.append(Fetches(tensor)) or by_tensor[-1]}
    est = common.Estimator(naming_model_fn, str(tmp_path), params=params,
                           config=common.RunConfig(device_plan=models.plan(num_towers)))
    est.train(models.train_input(FEATURES, LABELS, 16), steps=3, hooks=[by_name])
    predicted = np.array([p["probabilities"] for p in est.predict(models.eval_input(FEATURES, LABELS, 16))])
    assert len(by_name.seen) == 3
    for index, values in enumerate(by_name.seen):  # learning rate 0: each step's batch as predict sees it
        np.testing.assert_allclose(values["p"], predicted[16 * index:16 * (index + 1)], atol=1e-6)
        assert values["ce"] == pytest.approx(values["loss"])
        np.testing.assert_array_equal(by_tensor[0].seen[index], values["p"])  # the probe's spec's hook runs


def test_a_name_model_fn_does_not_give_is_refused_before_training(tmp_path):
    params = {"hidden": 4, "spec_hook": lambda tensor: Fetches(tensor)}
    est = common.Estimator(naming_model_fn, str(tmp_path), params=params)
    with pytest.raises(ValueError, match="LoggingTensorHook asks for softmax, which the step does not offer"):
        est.train(models.train_input(FEATURES, LABELS, 16), steps=2,
                  hooks=[common.hooks.LoggingTensorHook({"probabilities": "softmax"}, every_n_iter=1)])
    assert est.latest_checkpoint() is None


def _fed_model_fn(features, labels, mode):
    weight = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(weight - tf.cast(features["x"], tf.float32)))
    return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.2).minimize(
        loss, common.get_global_step()))


def _placeholder_input_fn():  # TF1's: placeholders a FeedFnHook feeds each session.run
    return {"x": common.placeholder(tf.int64, shape=[None], name="x")}, None


def test_a_feed_fn_hook_feeds_an_input_fn_of_placeholders_each_batch(tmp_path):
    fed = []

    def feed_fn():
        fed.append(len(fed))
        return {"x:0": np.full(4, 3, np.int64)}

    estimator = common.Estimator(_fed_model_fn, str(tmp_path))
    estimator.train(_placeholder_input_fn, hooks=[tf1_hooks.FeedFnHook(feed_fn)], steps=20)
    assert estimator.get_variable_value("w") == pytest.approx(3.0, abs=0.01)  # it learnt what was fed
    assert len(fed) >= 20
    unfed = tf.compat.v1.train.FeedFnHook(lambda: {"x:0": np.full(2, 3, np.int64)})  # TensorFlow's own
    assert estimator.evaluate(_placeholder_input_fn, hooks=[unfed], steps=2)["loss"] == pytest.approx(0.0, abs=1e-3)
    with pytest.raises(tf.errors.InvalidArgumentError,  # (raised where tf.data reads the batch, which it names)
                       match="FeedFnHook: feed_fn fed 'y:0', which is not a tensor of the graph"):
        estimator.train(_placeholder_input_fn, hooks=[tf1_hooks.FeedFnHook(lambda: {"y:0": [1]})], steps=1)


def test_a_hook_reads_the_global_step_with_session_run_in_training_and_in_evaluation(tmp_path):
    class ReadsTheStep(tf1_hooks.SessionRunHook):  # ELECTRA's ETAHook: the step from begin, read by session.run
        def __init__(self):
            self.read = []

        def begin(self):
            self._global_step = common.get_global_step()
            self._started = None

        def before_run(self, run_context):
            self._started = self._started or "before_run"  # (ELECTRA's hook times its run from here)
            return tf1_hooks.SessionRunArgs({"loss": "loss", "step": self._global_step} if self.evaluating else None)

        def after_run(self, run_context, run_values):
            assert self._started == "before_run"
            if self.evaluating:
                self.results.append(run_values.results)
            self.read.append(int(run_context.session.run(self._global_step)))

        def end(self, session):
            self.read.append(("end", int(session.run({"step": self._global_step})["step"])))

    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 4})
    training, evaluation = ReadsTheStep(), ReadsTheStep()
    training.evaluating, evaluation.evaluating, evaluation.results = False, True, []
    est.train(models.train_input(FEATURES, LABELS, 16), steps=3, hooks=[training])
    assert training.read == [1, 2, 3, ("end", 3)]  # the step after each run, as TF1's session read it
    est.evaluate(models.eval_input(FEATURES[:32], LABELS[:32], 16), hooks=[evaluation])
    assert evaluation.read == [3, 3, ("end", 3)]
    assert [r["step"] for r in evaluation.results] == [3, 3] and evaluation.results[1]["loss"] > 0
    with pytest.raises(NotImplementedError, match="session.run: TF2 has no session"):
        tf1_hooks.SessionRunContext().session.run(tf.constant(1.0) + tf.Variable(1.0), feed_dict={"x": 1})


class GraphReader(tf1_hooks.SessionRunHook):
    """Reads the graph's variable collections in begin(), as TF1 hooks built their savers there."""

    def begin(self):
        def names(variables):
            return sorted(v.name.split(":")[0] for v in variables)
        self.seen = {"global": names(tf.compat.v1.global_variables()),
                     "trainable": names(tf.compat.v1.trainable_variables()),
                     "moving_average": names(tf.compat.v1.moving_average_variables()),
                     "global_step": names(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.GLOBAL_STEP))}


def tf1_store_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("linear/w", [4, 3])
    counts = tf.compat.v1.get_variable("linear/counts", [3], trainable=False, collections=[
        tf.compat.v1.GraphKeys.GLOBAL_VARIABLES, tf.compat.v1.GraphKeys.MOVING_AVERAGE_VARIABLES])
    logits = tf.matmul(features, w) + counts
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf1_train.get_global_step())
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize("mode", ["train", "evaluate"])
def test_begin_finds_model_fns_variables_in_the_graphs_collections(tmp_path, mode):
    est = common.Estimator(tf1_store_fn, str(tmp_path))
    hook = GraphReader()
    input_fn = models.one_batch(FEATURES, LABELS, 8)
    est.train(input_fn, steps=1, hooks=[hook] if mode == "train" else None)
    if mode == "evaluate":
        est.evaluate(input_fn, steps=1, hooks=[hook])
    assert hook.seen == {"global": ["global_step", "linear/counts", "linear/w"], "trainable": ["linear/w"],
                         "moving_average": ["linear/counts"], "global_step": ["global_step"]}
    assert tf.compat.v1.global_variables() == []  # (the process's graph as it was)


def hooked_eval_fn(hooks):
    """A model_fn whose evaluation hook fetches its own tensors (ELECTRA's ETAHook(dict(loss=model.total_loss)))."""
    def model_fn(features, labels, mode):
        logits = tf.matmul(features, tf.compat.v1.get_variable("linear/w", [4, 3]), name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf1_train.get_global_step())
        hooks.append(Fetches({"loss": loss, "logits": "logits:0", "step": tf1_train.get_global_step()}))
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op, evaluation_hooks=hooks[-1:])
    return model_fn


@pytest.mark.parametrize("towers", [1, 2])
def test_an_evaluation_hook_fetches_model_fns_tensors_each_batch(tmp_path, towers):
    hooks = []
    est = common.Estimator(hooked_eval_fn(hooks), str(tmp_path), config=common.RunConfig(
        device_plan=models.plan(towers)))
    est.train(models.train_input(FEATURES, LABELS, 16), steps=3)
    results = est.evaluate(models.eval_input(FEATURES[:32], LABELS[:32], 16))
    seen = next(hook.seen for hook in hooks if hook.seen)  # (the EVAL probe's spec's hook)
    assert [(r["logits"].shape, r["step"]) for r in seen] == [((16, 3), 3)] * 2  # (the whole batch, all towers)
    assert np.mean([r["loss"] for r in seen]) == pytest.approx(results["loss"], rel=1e-5)


def test_an_evaluation_hook_asking_for_a_tensor_model_fn_lacks_is_refused_by_name(tmp_path):
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 4})
    est.train(models.train_input(FEATURES, LABELS, 16), steps=1)
    with pytest.raises(ValueError, match="Fetches.before_run asks for probabilities, which the step does not offer"):
        est.evaluate(models.eval_input(FEATURES[:32], LABELS[:32], 16), hooks=[Fetches("probabilities:0")])
