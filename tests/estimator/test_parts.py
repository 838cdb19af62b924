"""What an Estimator is assembled from: the hooks a call runs (TF1 ones wrapped), loops run in the model's scope."""

import common
from common import hooks
from common.adapters import session_run_hooks as session_run_hook
from common.estimator.parts import user_hooks
from tests import models


class Probe:
    """The part of a ProbeInfo user_hooks reads: the spec's hooks."""

    def __init__(self, spec_hooks):
        self.hooks = tuple(spec_hooks)


def test_the_callers_hooks_then_the_specs_and_tf1_hooks_wrapped():
    mine, spec_hook, tf1_hook = hooks.NanTensorHook(), hooks.StopAtStepHook(num_steps=1), \
        session_run_hook.SessionRunHook()
    run = user_hooks([mine, tf1_hook], Probe([spec_hook]))
    assert run[0] is mine and run[2] is spec_hook
    assert isinstance(run[1], session_run_hook.SessionRunHookAdapter) and run[1].hook is tf1_hook
    assert user_hooks(None, Probe([])) == []


def test_a_loop_runs_in_the_models_scope(tmp_path):
    features, labels = models.blobs(32)
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 4})
    est.train(models.train_input(features, labels, 16), steps=1)
    parts = est._parts
    assert parts.run_in_scope(lambda: common.get_global_step()) is parts.model.global_step
