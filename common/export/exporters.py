"""Exporters: what train_and_evaluate exports after each evaluation (EvalSpec(exporters=...)).

As tf.estimator's: each exporter writes under model_dir/export/<its name>/
<timestamp>, through the estimator's atomic export (a temp folder renamed
when complete, so an interrupted export leaves nothing under a final name);
LatestExporter exports after every evaluation, BestExporter when the
evaluation beats the best so far (read back from the eval events, so a
resumed run remembers it), FinalExporter after the last one. Each keeps its
`exports_to_keep` newest exports.
"""

import os

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.export import saved_model
from common.state import summaries


class Exporter:
    """Base class of exporters, as tf.estimator.Exporter: a name and export(), which train_and_evaluate calls
    after each evaluation of an EvalSpec that lists the exporter.

    Args:
      name: the exporter's name, the folder under model_dir/export/ its exports go to (a trailing "/" is
        allowed, as tf.estimator joined it as a path).

    Raises:
      ValueError: a name that is not a non-empty str, or that holds a "/" (but a trailing one).
    """

    def __init__(self, name):
        if not name or not isinstance(name, str) or "/" in name.rstrip("/") or not name.strip("/"):
            raise ValueError(f"an exporter's name must be a non-empty folder name (a trailing '/' is allowed, as "
                             f"tf.estimator joined it as a path), got {name!r}")
        self._name = name

    @property
    def name(self):
        """The exporter's name (a str), the folder under model_dir/export/ its exports go to."""
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        """Exports the evaluated model, or not, as the exporter's rule says; subclasses implement it.

        Args:
          estimator: the Estimator being trained (its export_saved_model writes the export).
          export_path: the folder to export under, model_dir/export/<name>; each export is a timestamped
            folder in it.
          checkpoint_path: the checkpoint that was evaluated, to export; None: the estimator's newest.
          eval_result: the evaluation's results, {metric: value, "loss": ..., "global_step": ...}.
          is_the_final_export: whether this is training's last evaluation.

        Returns:
          The export's path (a str), or None where it did not export.

        Raises:
          NotImplementedError: here, in the base class.
        """
        raise NotImplementedError


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, exports_to_keep, assets_extra=None, as_text=False):
        super().__init__(name)
        saved_model.check_write_options(f"{type(self).__name__} {name!r}", assets_extra, as_text)
        if serving_input_receiver_fn is None:
            raise ValueError(f"{type(self).__name__} {name!r}: serving_input_receiver_fn is required")
        if exports_to_keep is not None and exports_to_keep < 1:
            raise ValueError(f"{type(self).__name__} {name!r}: exports_to_keep must be >= 1 or None, "
                             f"got {exports_to_keep}")
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._write_options = {"assets_extra": assets_extra, "as_text": as_text}
        self._exports_to_keep = exports_to_keep
        self._last = None  # (checkpoint, export path) of the last export

    def _export(self, estimator, export_path, checkpoint_path):
        """Exports the checkpoint, unless this exporter already did (the final
        evaluation of a run that ended between saves hears the last one again)."""
        if self._last is not None and checkpoint_path is not None and self._last[0] == checkpoint_path:
            return self._last[1]
        path = estimator.export_saved_model(export_path, self._serving_input_receiver_fn,
                                            checkpoint_path=checkpoint_path, **self._write_options)
        self._last = checkpoint_path, path
        self._keep_newest(export_path)
        return path

    def _keep_newest(self, export_path):
        if self._exports_to_keep is None:
            return
        stamps = sorted(int(d) for d in tf.io.gfile.listdir(export_path) if d.strip("/").isdigit())
        for stamp in stamps[:-self._exports_to_keep]:
            old = os.path.join(export_path, str(stamp))
            logging.info("%s: removing %s, older than the %d kept.", self.name, old, self._exports_to_keep)
            tf.io.gfile.rmtree(old)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation, keeping the newest `exports_to_keep`: tf.estimator's LatestExporter.

    Args:
      name: the exporter's name: its exports go to model_dir/export/<name>/<timestamp>.
      serving_input_receiver_fn: a function of no arguments that returns a ServingInputReceiver (as
        build_raw_serving_input_receiver_fn and build_parsing_serving_input_receiver_fn make).
      assets_extra: {path under the export's assets.extra/: path of an existing file to copy there}, or None.
      as_text: whether to write saved_model.pbtxt, the text form, instead of saved_model.pb.
      exports_to_keep: how many of the newest exports to keep (older ones are deleted); None: all.

    Raises:
      ValueError: a bad name, no serving_input_receiver_fn, exports_to_keep < 1, or an assets_extra path
        outside assets.extra/ or of a file that does not exist.
      TypeError: as_text not a bool.
    """

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, exports_to_keep, assets_extra, as_text)

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        """Exports the checkpoint (see Exporter.export), then deletes the exports past exports_to_keep; the
        checkpoint this exporter exported last is not exported again (its path is returned).

        Args:
          estimator: the Estimator being trained.
          export_path: model_dir/export/<name>.
          checkpoint_path: the evaluated checkpoint; None: the newest.
          eval_result: the evaluation's results (unused).
          is_the_final_export: whether this is training's last evaluation (unused).

        Returns:
          The export's path.
        """
        return self._export(estimator, export_path, checkpoint_path)


class FinalExporter(_SavedModelExporter):
    """Exports once, after the last evaluation of training: tf.estimator's FinalExporter.

    Args:
      name: the exporter's name: its export goes to model_dir/export/<name>/<timestamp>.
      serving_input_receiver_fn: a function of no arguments that returns a ServingInputReceiver.
      assets_extra: {path under the export's assets.extra/: path of an existing file to copy there}, or None.
      as_text: whether to write saved_model.pbtxt, the text form, instead of saved_model.pb.

    Raises:
      ValueError: a bad name, no serving_input_receiver_fn, or a bad assets_extra path.
      TypeError: as_text not a bool.
    """

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        super().__init__(name, serving_input_receiver_fn, None, assets_extra, as_text)

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        """Exports the checkpoint (see Exporter.export) when this is the final evaluation.

        Args:
          estimator: the Estimator being trained.
          export_path: model_dir/export/<name>.
          checkpoint_path: the evaluated checkpoint; None: the newest.
          eval_result: the evaluation's results (unused).
          is_the_final_export: whether this is training's last evaluation; else nothing is exported.

        Returns:
          The export's path, or None when it is not the final evaluation.
        """
        if not is_the_final_export:
            return None
        logging.info("Performing the final export in the end of training.")
        return self._export(estimator, export_path, checkpoint_path)


def loss_smaller(best_eval_result, current_eval_result):
    """BestExporter's default rule: the current evaluation's loss is smaller."""
    return _metric(current_eval_result, "loss") < _metric(best_eval_result, "loss")


def _metric(eval_result, key):
    if key not in eval_result:
        raise KeyError(f"the evaluation has no {key!r} (it has {', '.join(sorted(eval_result))})")
    return eval_result[key]


def metric_better(key, higher_is_better):
    """A compare_fn: the current evaluation's `key` is higher (or lower) than the best's."""
    def compare(best_eval_result, current_eval_result):
        best, current = _metric(best_eval_result, key), _metric(current_eval_result, key)
        return current > best if higher_is_better else current < best
    compare.__name__ = f"{key}_{'higher' if higher_is_better else 'lower'}"
    return compare


class BestExporter(_SavedModelExporter):
    """Exports when compare_fn(best_eval_result, current_eval_result) says the
    evaluation is the best so far. The best so far starts from the eval
    events in model_dir matching event_file_pattern (a resumed run keeps its
    standard); with none before it, the first evaluation exports. tf.estimator's BestExporter.

    Args:
      name: the exporter's name: its exports go to model_dir/export/<name>/<timestamp>.
      serving_input_receiver_fn: a function of no arguments that returns a ServingInputReceiver (required).
      event_file_pattern: a glob, relative to model_dir, of the event files the earlier evaluations are read
        from ("eval/*.tfevents.*"; an EvalSpec with a name writes to eval_<name>/).
      compare_fn: compare_fn(best_eval_result, current_eval_result) -> True when the current evaluation is
        better (dicts metric -> value); default loss_smaller (a KeyError for results without "loss").
      assets_extra: {path under the export's assets.extra/: path of an existing file to copy there}, or None.
      as_text: whether to write saved_model.pbtxt, the text form, instead of saved_model.pb.
      exports_to_keep: how many of the newest exports to keep (older ones are deleted); None: all.

    Raises:
      ValueError: a bad name, no serving_input_receiver_fn, exports_to_keep < 1, a bad assets_extra path, or a
        compare_fn that is not callable.
      TypeError: as_text not a bool.
    """

    def __init__(self, name="best_exporter", serving_input_receiver_fn=None,
                 event_file_pattern="eval/*.tfevents.*", compare_fn=loss_smaller, assets_extra=None, as_text=False,
                 exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, exports_to_keep, assets_extra, as_text)
        if not callable(compare_fn):
            raise ValueError(f"BestExporter {name!r}: compare_fn must be callable, got {compare_fn!r}")
        self._compare_fn = compare_fn
        self._event_file_pattern = event_file_pattern
        self._best_eval_result = None
        self._read_events = False

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        """Exports the checkpoint (see Exporter.export) when compare_fn says the evaluation beats the best so far
        (read, the first time, from the event files of evaluations before this one), which it then becomes.

        Args:
          estimator: the Estimator being trained (its model_dir holds the event files).
          export_path: model_dir/export/<name>.
          checkpoint_path: the evaluated checkpoint; None: the newest.
          eval_result: the evaluation's results; "global_step" among them.
          is_the_final_export: whether this is training's last evaluation (unused).

        Returns:
          The export's path, or None when the evaluation is not the best.
        """
        if not self._read_events:
            self._best_eval_result = self._best_in_events(estimator.model_dir, eval_result["global_step"])
            self._read_events = True
        if self._best_eval_result is not None and not self._compare_fn(self._best_eval_result, eval_result):
            return None
        logging.info("%s: exporting the best evaluation so far (global step %d).", self.name,
                     eval_result["global_step"])
        self._best_eval_result = dict(eval_result)
        return self._export(estimator, export_path, checkpoint_path)

    def _best_in_events(self, model_dir, current_step):
        """The best evaluation written before `current_step` (earlier runs), or None."""
        by_step = summaries.metrics_by_step(tf.io.gfile.glob(os.path.join(model_dir, self._event_file_pattern)))
        best = None
        for step, metrics in by_step.items():
            if step < current_step and (best is None or self._compare_fn(best, metrics)):
                best = dict(metrics, global_step=step)
        return best
