"""tf.estimator's behaviour, differentially: tests/programs/tf1_schedule.py, upgraded, against what the same
file did on TensorFlow 2.15.1 with tensorflow-estimator 2.15.0 (tests/data/tf215_reference.json, "tf1_schedule"):
the evaluation loss, when summaries, loss lines and checkpoints are written, what train_and_evaluate, predict and
export return. Where this project differs on purpose, the test says so and docs/MIGRATING.md says why."""

import json
import logging
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.util import event_pb2

import common
from common import hooks
from common.tf1 import train as tf1_train
from common.tf1 import variables as tf1_variables
from tests import DATA, ROOT
from tests.data.tf215_logs import record_resume
from tests.programs import upgraded

with open(os.path.join(DATA, "tf215_reference.json")) as _f:
    REFERENCE = json.load(_f)["tf1_schedule"]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return upgraded("tf1_schedule", str(tmp_path_factory.mktemp("upgraded")))


def _events(event_dir):
    """[step, tag, kind(, value for loss)] of every summary value in event_dir's files, in file order."""
    found = []
    for path in sorted(tf.io.gfile.glob(os.path.join(event_dir, "events.out.tfevents.*"))):
        for record in tf.data.TFRecordDataset(path):
            event = event_pb2.Event.FromString(record.numpy())
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                found.append([event.step, value.tag, kind] + ([value.simple_value] if value.tag == "loss" else []))
    return found


def _checkpoint_steps(model_dir):
    return sorted(int(name.split("-")[1].split(".")[0]) for name in os.listdir(model_dir)
                  if name.startswith("model.ckpt-") and name.endswith(".index"))


def test_the_evaluation_loss_is_the_mean_of_the_batch_losses(program, tmp_path):
    """100 examples in batches of 32: the last batch of 4 weighs as much as a full one, as tf.estimator's
    loss metric had it (the per-example mean would be 3.224); metrics stay per example."""
    results = program.evaluate_untrained(str(tmp_path))
    assert results == pytest.approx(REFERENCE["evaluate_untrained"], rel=1e-6)
    x, y = program.data()
    squared = (0.5 * x - y) ** 2
    batch_means = [squared[i:i + 32].mean() for i in range(0, 100, 32)]
    assert results["loss"] == pytest.approx(np.mean(batch_means), rel=1e-6)
    assert squared.mean() == pytest.approx(3.224, abs=1e-3)


def test_summaries_loss_lines_and_checkpoints_fall_on_tf_estimators_steps(program, tmp_path, caplog):
    """Summaries at the first step and every 3 after it (1, 4, 7, 10), written as simple_value; loss lines
    showing the step each logged step started from; checkpoints at 0, 4, 8 and the end."""
    with caplog.at_level(logging.INFO):
        program.train_on_a_schedule(str(tmp_path))
    ours = _events(str(tmp_path))
    theirs = REFERENCE["summaries"]
    assert [e[:3] for e in ours if e[1] in ("loss", "global_step/sec")] == [e[:3] for e in theirs]
    np.testing.assert_allclose([e[3] for e in ours if e[1] == "loss"], [e[3] for e in theirs if e[1] == "loss"],
                               rtol=1e-6)
    assert _checkpoint_steps(str(tmp_path)) == REFERENCE["checkpoint_steps"]
    pattern = r"^loss = ([\d.]+), step = (\d+)( \([\d.]+ sec\))?$"
    ours = [re.match(pattern, m).groups() for m in caplog.messages if m.startswith("loss = ")]
    theirs = [re.match(pattern, m).groups() for m in REFERENCE["loss_lines"]]
    assert [(step, bool(timed)) for _, step, timed in ours] == [(step, bool(timed)) for _, step, timed in theirs]
    np.testing.assert_allclose([float(v) for v, *_ in ours], [float(v) for v, *_ in theirs], rtol=1e-6)


def test_train_and_evaluate_returns_metrics_and_exports_and_predict_keys_may_be_one_name(program, tmp_path):
    metrics, exports = program.train_and_evaluate(str(tmp_path))
    reference = REFERENCE["train_and_evaluate"]
    assert metrics == pytest.approx(reference["metrics"], rel=1e-5)
    assert len(exports) == reference["exports"]
    assert os.path.isdir(exports[0].decode("utf-8"))  # tf.estimator's paths were bytes
    loss_steps = [step for step, tag, *_ in _events(os.path.join(tmp_path, "eval")) if tag == "loss"]
    assert loss_steps == reference["eval_loss_steps"]
    assert len(os.listdir(os.path.join(tmp_path, "export", "latest"))) == reference["latest_exports"]
    estimator = common.Estimator(program.model_fn, str(tmp_path))
    predicted = program.predict_classes(estimator)
    assert [{k: int(v) for k, v in p.items()} for p in predicted] == REFERENCE["predict_classes"]


def test_without_summaries_or_periodic_checkpoints_only_the_runs_ends_are_saved(program, tmp_path):
    """tf.estimator with save_checkpoints_steps and _secs both None saved nothing at all, and a later
    evaluate() ran on the initial weights; here train() still saves its start and its end (on purpose:
    a call's training is not thrown away), and writes no summaries."""
    config = common.RunConfig(save_summary_steps=None, log_step_count_steps=None, save_checkpoints_steps=None,
                              save_checkpoints_secs=None, keep_checkpoint_max=None)
    estimator = common.Estimator(program.model_fn, str(tmp_path), config=config)
    estimator.train(lambda: program.input_fn(8, repeat=True), steps=5)
    assert REFERENCE["no_checkpoints_or_summaries"] == {"checkpoint_steps": [], "events": 0}
    assert _checkpoint_steps(str(tmp_path)) == [0, 5]
    assert _events(str(tmp_path)) == []
    assert estimator.evaluate(lambda: program.input_fn(32))["global_step"] == 5


def test_a_checkpoint_saver_hook_replaces_the_estimators_own_and_carries_its_listeners(program, tmp_path):
    class Listener:
        def __init__(self):
            self.saved = []

        def after_save(self, estimator, step):
            self.saved.append(step)

    listener = Listener()
    estimator = common.Estimator(program.model_fn, str(tmp_path),
                                 config=common.RunConfig(save_checkpoints_steps=2, keep_checkpoint_max=None))
    saver = hooks.CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[listener])
    estimator.train(lambda: program.input_fn(8, repeat=True), steps=7, hooks=[saver])
    assert _checkpoint_steps(str(tmp_path)) == [0, 3, 6, 7] and listener.saved == [3, 6, 7]
    with pytest.raises(ValueError, match="checkpoints go to the estimator's model_dir"):
        estimator.train(lambda: program.input_fn(8, repeat=True), steps=1,
                        hooks=[hooks.CheckpointSaverHook(str(tmp_path / "elsewhere"), save_steps=3)])


def test_the_nan_stop_is_tf1s_error_class():
    assert issubclass(hooks.NanLossDuringTrainingError, tf.compat.v1.train.NanLossDuringTrainingError)
    assert str(hooks.NanLossDuringTrainingError(3, float("nan"))).startswith("Model diverged with loss = nan at "
                                                                            "global step 3")


def test_a_run_whose_input_ends_mid_call_neither_breaks_a_session_run_hook_nor_exports_twice(program, tmp_path):
    """100 examples in batches of 16 (the last of 4) with three steps a call: a SessionRunHook fetching a
    tensor model_fn named hears every step, as in TF1 (its steps run one a call), the input's end
    counts no step, and the final evaluation (of the checkpoint the last save, at 7, already evaluated)
    exports nothing again: the exports are step 5's and step 7's."""
    from common.adapters import session_run_hooks as session_run_hook

    class Fetch(session_run_hook.SessionRunHook):
        def __init__(self):
            self.seen = []

        def before_run(self, run_context):
            return session_run_hook.SessionRunArgs("y:0")

        def after_run(self, run_context, run_values):
            self.seen.append(run_values.results.shape)

    def naming_fn(features, labels, mode, params):
        spec = program.model_fn(features, labels, mode, params)
        tf.identity(spec.predictions["y"], name="y")
        return spec

    estimator = common.Estimator(naming_fn, str(tmp_path), config=common.RunConfig(
        save_checkpoints_steps=5, steps_per_loop=3))
    hook = Fetch()
    latest = common.LatestExporter("latest", program.serving_input_receiver_fn, exports_to_keep=None)
    metrics, exports = common.train_and_evaluate(
        estimator, common.TrainSpec(lambda: program.input_fn(16), hooks=[hook]),
        common.EvalSpec(lambda: program.input_fn(32), steps=None, throttle_secs=0, exporters=[latest]))
    assert metrics["global_step"] == 7 and hook.seen == [(16, 1)] * 6 + [(4, 1)]  # 100 examples: 6 x 16 + 4
    written = sorted(os.listdir(os.path.join(tmp_path, "export", "latest")))
    assert len(written) == 2 and exports == [os.path.join(tmp_path, "export", "latest", written[-1])]  # 5, 7


# Lines only a TF1 session printed (there is none here), and lines only this project prints.
_SESSION_LINES = ("Graph was finalized.", "Running local_init_op.", "Done running local_init_op.")
_OWN_LINES = ("Holding ", "Start-up of ", "Progress: ")


def _line_kinds(lines, model_dir):
    """The INFO:tensorflow: lines as kinds: the model dir, numbers, dates and the config's values left out."""
    kinds = []
    for line in lines:
        if not line.startswith("INFO:tensorflow:"):
            continue
        text = line[len("INFO:tensorflow:"):].replace(str(model_dir), "MODEL_DIR")
        if text in _SESSION_LINES or text.startswith(_OWN_LINES):
            continue
        if text.startswith("Using config: "):
            text = "Using config: {...}"
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", "DATE", text)  # (a format's own dashes kept)
        kinds.append(re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text))
    return kinds


def test_a_plain_scripts_log_lines_are_tf_estimators_in_text_order_and_logger(tmp_path):
    """tests/data/tf215_logs/record.py's scenario (a DNNClassifier trained and evaluated in a script that asks
    TensorFlow for INFO) prints tf.estimator 2.15's lines, by the "tensorflow" logger, in its order: but the
    three of a TF1 session, and this project's own (the writer lock, start-up times, progress)."""
    code = ("import sys\n"
            "import tensorflow as tf\n"
            "import common\n"
            "from common import canned\n"
            "from tests.data.tf215_logs import record\n"
            "record.scenario(canned.DNNClassifier, common.RunConfig, sys.argv[1])\n")
    model_dir = tmp_path / "model"
    result = subprocess.run([sys.executable, "-c", code, str(model_dir)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    with open(os.path.join(DATA, "tf215_logs", "dnn_classifier.log")) as recorded:
        theirs = _line_kinds(recorded.read().splitlines(), "MODEL_DIR")
    assert _line_kinds(result.stderr.splitlines(), model_dir) == theirs


@pytest.mark.parametrize("variant", ["bert", "plain"])
def test_the_step_labels_of_a_resumed_run_are_tf_estimators(variant, tmp_path):
    """A train_op that counts the global step itself (BERT's) is logged with the step it ended on, as TF1's fetch
    read the value it wrote (the first line of a run raced there: 20 or 21); minimize(global_step=...) with the
    step it started from. Trained to 20, then resumed by a new Estimator to 40, as record_resume.py ran TF 2.15."""
    with open(os.path.join(DATA, "tf215_logs", "resume_steps.json")) as recorded:
        theirs = json.load(recorded)[variant]
    inner = record_resume.model_fn_of(variant == "bert", tf1_variables.trainable_variables, tf1_train.AdamOptimizer)

    def model_fn(features, labels, mode):
        loss, train_op = inner(features, labels, mode)
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)
    labels = []
    handler = logging.Handler()
    handler.emit = lambda record: labels.extend(int(m) for m in re.findall(r", step = (\d+)", record.getMessage()))
    logger = logging.getLogger("tensorflow")
    logger.addHandler(handler)
    try:
        for max_steps in (20, 40):
            config = common.RunConfig(log_step_count_steps=10, save_checkpoints_steps=20, tf_random_seed=0)
            common.Estimator(model_fn, str(tmp_path), config=config).train(record_resume.input_fn,
                                                                             max_steps=max_steps)
    finally:
        logger.removeHandler(handler)
    assert labels in theirs
