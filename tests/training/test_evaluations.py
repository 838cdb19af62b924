"""Evaluations after checkpoints: each EvalSpec when its throttle allows, its exporters told if it is the final."""

import common
from common.training.evaluations import Evaluations
from tests.hooks import FakeClock


class FakeEstimator:
    """What Evaluations uses of an Estimator: evaluate, latest_checkpoint, model_dir."""

    model_dir = "/model"

    def __init__(self):
        self.evaluated = []

    def evaluate(self, input_fn, steps=None, hooks=None, name=None, checkpoint_path=None):
        self.evaluated.append(name)
        return {"loss": 0.5, "global_step": 7}

    def latest_checkpoint(self):
        return "/model/model.ckpt-7"


class RecordingExporter(common.Exporter):
    def __init__(self):
        super().__init__("rec")
        self.calls = []

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        self.calls.append((export_path, checkpoint_path, is_the_final_export))
        return f"{export_path}/1"


def test_a_spec_is_evaluated_when_its_throttle_allows_then_exported():
    clock, exporter, estimator = FakeClock(), RecordingExporter(), FakeEstimator()
    spec = common.EvalSpec(lambda: None, name="val", throttle_secs=60, exporters=[exporter])
    evaluations = Evaluations([spec], max_steps=20, clock=clock)
    evaluations.after_save(estimator, 5)
    clock.now += 30
    evaluations.after_save(estimator, 10)  # within the throttle: not evaluated
    clock.now += 31
    evaluations.after_save(estimator, 15)
    evaluations.after_save(estimator, 20)  # at max_steps, but within the throttle
    assert estimator.evaluated == ["val", "val"]
    assert exporter.calls == [("/model/export/rec", "/model/model.ckpt-7", False)] * 2
    evaluations.evaluate(estimator, 20, spec)  # the last step's evaluation is the final one
    assert exporter.calls[-1][2] is True and "val" in evaluations.final_exported
    assert evaluations.results["val"] == {"loss": 0.5, "global_step": 7} and evaluations.last_step["val"] == 20
    assert evaluations.exports["val"] == ["/model/export/rec/1"]
