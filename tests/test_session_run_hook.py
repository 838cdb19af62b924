"""TF1 SessionRunHooks and CheckpointSaverListeners run as TF1 ran them, steps numbered alike."""

import pytest
import tensorflow as tf

import common
from common.tf1 import session_run_hook as tf1_hooks
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


def test_fetches_the_step_does_not_offer_and_session_use_are_refused_by_name(tmp_path):
    class AsksForLogits(tf1_hooks.SessionRunHook):
        def before_run(self, run_context):
            return tf1_hooks.SessionRunArgs(["loss", "logits:0"])

    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 4})
    with pytest.raises(ValueError, match="AsksForLogits.before_run asks for logits, which the step does not offer; "
                                         "it offers loss, learning_rate, batch_accuracy, global_step"):
        est.train(models.train_input(FEATURES, LABELS, 16), steps=2, hooks=[AsksForLogits()])

    class RunsTheSession(tf1_hooks.SessionRunHook):
        def after_create_session(self, session, coord):
            session.run(tf.constant(1))

    with pytest.raises(NotImplementedError, match="session.run: TF2 has no session"):
        est.train(models.train_input(FEATURES, LABELS, 16), steps=2, hooks=[RunsTheSession()])

    class FetchesATensor(tf1_hooks.SessionRunHook):
        def before_run(self, run_context):
            return tf1_hooks.SessionRunArgs(tf.constant(1.0))

    with pytest.raises(ValueError, match="SessionRunArgs fetches .*a fetch here is the name of a value"):
        est.train(models.train_input(FEATURES, LABELS, 16), steps=2, hooks=[FetchesATensor()])
