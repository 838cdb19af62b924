"""What each mode restores before it runs: the newest checkpoint that loads, or how a new model starts.

Training restores all state (the model, the optimizer, the global step);
evaluation, prediction and export restore the model's variables and the
global step. A checkpoint tf.estimator wrote is read under its names
(common.state.tf_estimator_names), and training writes the model dir on
under them, so tf.estimator can take it back. A model_dir whose spec names a tf.train.Checkpoint as its
Scaffold's saver is restored through that checkpoint; a TF1 Saver there that names variables otherwise
(`Saver(ema.variables_to_restore())`, the TPU models' evaluation of their moving averages) gives evaluation
and prediction those variables from the names it gives. With no checkpoint in
model_dir the model starts new: from warm_start_from (training, on the
chief), from the checkpoints model_fn named with init_from_checkpoint, and
with the Scaffold's init_fn (training).
"""

import os

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.spec.model_fn import ModeKeys
from common.state import checkpoints, part_slots, tf_estimator_names, vocabularies
from common.state.warm_start import warm_start
from common.tf1_runtime.tf1_graph import variable_name


class ModelState:
    """The model's state as model_dir holds it.

    model: the engine's ModelBuilder; store: the CheckpointStore writes go to
    (a non-chief host trains with one of its own, see Estimator.train).
    """

    def __init__(self, model, store, warm_start_settings=None, is_chief=True):
        self.model = model
        self.store = store
        self.warm_start_settings = warm_start_settings
        self._is_chief = is_chief
        # A model dir tf.estimator started keeps its names: each project name -> the name its checkpoints use,
        # and the variables of what they hold that the model does not read (see save_state)
        self.saved_names = {}
        self.carried = {}

    def save_state(self, named_state, optimizer_names):
        """(variables by the names this model dir's checkpoints use, optimizer-state names likewise): a model
        dir tf.estimator started is written as tf.estimator wrote it, so tf.estimator can load it again."""
        if not self.saved_names and not self.carried:
            return named_state, optimizer_names
        variables = {saved: v for name, v in named_state.items() for saved in self._written_as(name)}
        variables.update(self.carried)
        return variables, {saved for name in optimizer_names for saved in self._written_as(name)} | set(self.carried)

    def _written_as(self, name):
        """The names the checkpoints hold `name` under (a slot tf.estimator 2.15 saved per part: every part's)."""
        return part_slots.each_name(self.saved_names.get(name, name))

    def restore(self, mode, checkpoint_path=None, info=None):
        """Loads state for `mode` from checkpoint_path, else from the newest
        checkpoint in model_dir that loads; returns the one used (or None,
        having started the model new). info: the mode's ProbeInfo."""
        training = mode == ModeKeys.TRAIN
        state = checkpoints.saved_form(self.model.named_state(with_optimizer=training))
        model_names = checkpoints.saved_names(self.model.model_variables)
        names = list(state) if training else [checkpoints.GLOBAL_STEP] + model_names

        def load_by_name(prefix):
            renamed = checkpoints.restore(prefix, state, names, ignored=self.model.metric_state_names(),
                                          partial=not training)
            by_object = any(old.endswith(tf_estimator_names.ATTRIBUTE) for saved_name in renamed.values()
                            for old in part_slots.each_name(saved_name))
            self.saved_names = {} if by_object else renamed  # (a Keras object graph is not written by name)
            carried = checkpoints.carried_state(prefix, state, renamed) if training and renamed and not by_object \
                else {}
            self.carried = {name: tf.Variable(value, trainable=False) for name, value in carried.items()}

        load = self._object_restore() or load_by_name
        try:
            if checkpoint_path:
                load(checkpoint_path)
                path = checkpoint_path
            else:
                path = self.store.restore_newest(load)
        except checkpoints.CheckpointMismatchError as error:  # (a vocabulary file that grew says why)
            grown = vocabularies.grown(self.store.model_dir, self.model.vocabulary_files)
            if not grown:
                raise
            raise checkpoints.CheckpointMismatchError(
                f"checkpoint {error.path} does not fit the model: {grown} ({error.differences}; the model dir is "
                "untouched)", error.path, error.differences) from error
        if path:
            vocabularies.check(os.path.dirname(path), self.model.vocabulary_files, f"{mode} from {path}")
            logging.info("Restoring parameters from %s", path)  # (tf.estimator's line, every mode)
            if not training:
                self._restore_as_the_saver_names(path, getattr(getattr(info, "scaffold", None), "saver", None))
            return path
        self._start_new(mode, state, model_names, info)
        return None

    @staticmethod
    def _restore_as_the_saver_names(path, saver):
        """Assigns each variable the Scaffold's TF1 Saver maps another checkpoint name to that tensor, as the
        Saver restored it in TF1 (every value read first: a name the checkpoint lacks assigns nothing)."""
        var_list = getattr(saver, "var_list", None)  # (a list, or none: each variable under its own name)
        renamed = {name: variable for name, variable in var_list.items() if name != variable_name(variable)} \
            if isinstance(var_list, dict) else {}
        if renamed:
            missing = sorted(set(renamed) - set(checkpoints.variable_shapes(path)))
            if missing:
                raise checkpoints.CheckpointMismatchError(
                    f"the Scaffold's Saver restores {checkpoints.describe(missing)} from {path}, which does not hold "
                    "them", path, missing)
            values = checkpoints.read_values(path, list(renamed))
            for name, variable in renamed.items():
                variable.assign(values[name])
            logging.info("Restored %d variable(s) from the names the Scaffold's Saver gives them (%s, ...)",
                         len(renamed), next(iter(renamed)))

    def _object_restore(self):
        """restore(prefix) through the Scaffold's tf.train.Checkpoint, or None when the spec names none."""
        checkpoint = self.model.scaffold_checkpoint()
        if checkpoint is None:
            return None

        def restore(prefix):
            try:
                checkpoint.read(prefix).assert_existing_objects_matched()
            except (tf.errors.OpError, AssertionError, ValueError) as error:
                raise checkpoints.CheckpointDamagedError(
                    f"{prefix} cannot be read through the Scaffold's checkpoint ({checkpoints.first_line(error)})"
                ) from error
            self.model.sync_step_views(to_views=False)

        return restore

    def _start_new(self, mode, state, model_names, info):
        training = mode == ModeKeys.TRAIN
        if training and self.warm_start_settings is not None and self._is_chief:
            warm_start(self.warm_start_settings, state, model_names,
                       checkpoints.saved_names(t for t in self.model.model_variables if t.trainable))
        for init in getattr(info, "checkpoint_inits", ()):
            self._init_from_checkpoint(init)
        if not training:
            logging.warning(
                "Could not find trained model in model_dir: %s, running initialization to %s.",
                self.store.model_dir, "evaluate" if mode == ModeKeys.EVAL else "predict")
        scaffold = getattr(info, "scaffold", None)
        if training and getattr(scaffold, "init_fn", None) is not None:
            scaffold.init_fn(scaffold, None)

    def _init_from_checkpoint(self, init):
        """Assigns the variables init_from_checkpoint named their checkpoint tensors, every value read first."""
        by_name = {}
        for tracked in self.model.model_variables:
            by_name[tracked.name] = tracked.variable
            by_name.setdefault(variable_name(tracked.variable), tracked.variable)
        unknown = sorted(set(init.tensors) - set(by_name))
        if unknown:
            raise ValueError(f"init_from_checkpoint({init.checkpoint}) names variables the model does not have: "
                             f"{', '.join(unknown[:10])}")
        reader = tf.train.load_checkpoint(init.checkpoint)
        values = {name: reader.get_tensor(tensor) for name, tensor in init.tensors.items()}
        for name, value in values.items():
            by_name[name].assign(value)
        logging.info("Initialized %d variable(s) from checkpoint %s.", len(values), init.checkpoint)
