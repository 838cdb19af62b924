"""The model_dir's checkpoints: written with rotation, found by listing, the newest that loads restored.

Saving goes through TF1's Saver, the name-keyed format tf.estimator wrote
(files "model.ckpt-<step>", each written under a temporary name and renamed
by TensorFlow, the `checkpoint` state file written atomically), or, for a
Scaffold's tf.train.Checkpoint, through tf.train.CheckpointManager. The model_dir's checkpoints are found by
listing its files (the state file is a hint, rewritten when it is damaged);
a restore takes the newest one that loads, and refuses a dir where none
does rather than train over it from step 0.
"""

import os
import shutil
from typing import Dict

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.internals import tensorflow_internals
from common.state import atomic, checkpoints, inference_meta_graph, meta_graph
from common.state.checkpoints import (CHECKPOINT_FILE, CHECKPOINT_NAME, INPUT_STATE, OPTIMIZER_STATE,
                                      CheckpointDamagedError, CheckpointWriteError, first_line)

STATE_FILE = "checkpoint"


def _bytes(count):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024


_LOST_CONTACT = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError, tf.errors.CancelledError,
                 tf.errors.AbortedError)


class CheckpointStore:
    """The model_dir's checkpoints: save with rotation, find the latest."""

    def __init__(self, model_dir, max_to_keep=5, keep_every_n_hours=10000.0):
        self.model_dir = model_dir
        self._max_to_keep = max_to_keep or None
        self._keep_hours = keep_every_n_hours
        self._writer = None  # save(step) -> prefix
        self._writer_key = None

    def listed(self):
        """[(step, prefix)] of every model.ckpt-<step> with a file in model_dir,
        newest first, found by listing the files: the `checkpoint` state file
        is only a hint, and a damaged one does not hide a checkpoint."""
        if not self.model_dir or not tf.io.gfile.isdir(self.model_dir):
            return []
        steps = set()
        for name in tf.io.gfile.listdir(self.model_dir):
            match = CHECKPOINT_FILE.match(name)
            if match:
                steps.add(int(match.group(1)))
        return [(step, os.path.join(self.model_dir, f"{CHECKPOINT_NAME}-{step}"))
                for step in sorted(steps, reverse=True)]

    @staticmethod
    def is_complete(prefix):
        """Whether the index and every data shard it implies exist (no tensor is read)."""
        if not tf.io.gfile.exists(prefix + ".index"):
            return False
        shards = tf.io.gfile.glob(prefix + ".data-*-of-*")
        if not shards:
            return False
        total = int(shards[0].rsplit("-of-", 1)[1])
        return all(tf.io.gfile.exists(f"{prefix}.data-{i:05d}-of-{total:05d}") for i in range(total))

    def latest(self):
        """The newest checkpoint whose files are all there, or None."""
        for _, prefix in self.listed():
            if self.is_complete(prefix):
                return prefix
        return None

    def restore_newest(self, restore):
        """Calls restore(prefix) on the newest checkpoint that loads and returns
        its prefix; None when model_dir holds no checkpoint file.

        A checkpoint that raises CheckpointDamagedError is passed over with a
        WARNING naming it and the one used. When checkpoint files exist but
        none loads, CheckpointDamagedError lists them: training over them
        from step 0 would lose the run.
        """
        damaged = []
        for _, prefix in self.listed():
            try:
                restore(prefix)
            except CheckpointDamagedError as error:
                damaged.append(str(error))
                continue
            if damaged:
                logging.warning("Checkpoint damaged, passed over: %s. Restored %s instead.", "; ".join(damaged), prefix)
            return prefix
        if damaged:
            raise CheckpointDamagedError(
                f"no checkpoint in {self.model_dir} can be loaded: {'; '.join(damaged)}. Training would start "
                "again from step 0 over them, so it does not: restore the files from a backup, or move them "
                "away (or use another model_dir) to start over.")
        return None

    def _repair_state_file(self):
        """Rewrites the `checkpoint` state file from the listing when it cannot
        be read or names a checkpoint that is not there, so the next save
        keeps rotating the checkpoints already in model_dir."""
        try:
            state = tf.train.get_checkpoint_state(self.model_dir)
            if state is not None and self.is_complete(state.model_checkpoint_path):
                return
        except (ValueError, tf.errors.OpError):
            pass
        complete = [os.path.basename(prefix) for _, prefix in reversed(self.listed()) if self.is_complete(prefix)]
        state_path = os.path.join(self.model_dir, STATE_FILE)
        if not complete:
            if tf.io.gfile.exists(state_path):
                tf.io.gfile.remove(state_path)
            return
        logging.warning("Rewriting %s from the checkpoints found: %s.", state_path, ", ".join(complete))
        lines = [f'model_checkpoint_path: "{complete[-1]}"'] + [f'all_model_checkpoint_paths: "{name}"'
                                                                for name in complete]
        atomic.write_text(state_path, "\n".join(lines) + "\n")

    def remove_partial_saves(self):
        """Deletes what a save killed midway leaves: `model.ckpt-N_temp` folders,
        (TF1's Saver) `model.ckpt-N.*.tempstate<n>` files, and the `.tmp-*`
        files of this store's own atomic writes (the `.meta` stub, the state file).

        TensorFlow writes a checkpoint's shards there and removes them after
        merging or renaming; a kill in between leaves them, and no later save
        of another step would clean them up.
        """
        if not self.model_dir or not tf.io.gfile.isdir(self.model_dir):
            return
        for path in tf.io.gfile.glob(os.path.join(self.model_dir, f"{CHECKPOINT_NAME}-*_temp")):
            logging.info("Removing %s, left by an interrupted save.", path)
            tf.io.gfile.rmtree(path)
        for pattern in (f"{CHECKPOINT_NAME}-*.tempstate*", f".tmp-*-{CHECKPOINT_NAME}-*", f".tmp-*-{STATE_FILE}"):
            for path in tf.io.gfile.glob(os.path.join(self.model_dir, pattern)):
                logging.info("Removing %s, left by an interrupted save.", path)
                tf.io.gfile.remove(path)

    def save(self, step, variables: Dict[str, tf.Variable], iterator=None, optimizer_names=(),
             scaffold_checkpoint=None, inference=None):
        """Writes model.ckpt-<step> and returns its prefix: name-keyed, holding
        `variables`, the input iterator's state when given and which names are
        optimizer state, with a `.meta` of the graph of `inference` (a callable
        returning the model's InferenceFunction, called at the first save
        given one) or of the variables alone; or, given `scaffold_checkpoint`
        (the tf.train.Checkpoint a Scaffold named as its saver), that
        checkpoint, object-based."""
        key = (tuple((name, id(variable)) for name, variable in variables.items()), id(iterator),
               tuple(sorted(optimizer_names)), id(scaffold_checkpoint))
        if self._writer is None or self._writer_key != key:
            tf.io.gfile.makedirs(self.model_dir)
            self._repair_state_file()
            self._writer = (self._object_writer(scaffold_checkpoint) if scaffold_checkpoint is not None
                            else self._name_keyed_writer(variables, iterator, optimizer_names))
            self._writer_key = key
        try:
            path = self._writer(step, inference)
        except _LOST_CONTACT:  # reading variables another task holds (a parameter server): not the disk's fault
            self.remove_partial_saves()
            raise
        except (tf.errors.OpError, OSError) as error:
            self.remove_partial_saves()
            raise CheckpointWriteError(self._write_failure(step, variables, error)) from error
        logging.info("Saving checkpoints for %d into %s.", step, os.path.join(self.model_dir, CHECKPOINT_NAME))
        return path

    def _name_keyed_writer(self, variables, iterator, optimizer_names):
        """save(step) through TF1's Saver, which rotates the checkpoints this store already holds too."""
        restorable = checkpoints.saved_form(variables)
        var_list, seen = {}, set()
        for name, variable in restorable.items():
            if isinstance(variable, checkpoints.Slices):  # (TF1's Saver saves slices)
                var_list[name] = variable.parts
            else:  # (a value the model dir holds under several names: TF1's Saver takes each variable once)
                var_list[name] = _SavedAgain(variable, name) if id(variable) in seen else variable
                seen.add(id(variable))
        optimizer_names = {checkpoints.saved_name(name, variables[name]) if name in variables else name
                           for name in optimizer_names}
        if iterator is not None:
            var_list[INPUT_STATE] = iterator
        if optimizer_names:
            var_list[OPTIMIZER_STATE] = tf.Variable("\n".join(sorted(optimizer_names)), trainable=False)
        with checkpoints.tf1_saver():
            saver = tf.compat.v1.train.Saver(var_list=var_list, max_to_keep=self._max_to_keep or 0,
                                             keep_checkpoint_every_n_hours=self._keep_hours, save_relative_paths=True)
        saver.recover_last_checkpoints([prefix for _, prefix in reversed(self.listed()) if self.is_complete(prefix)])

        metas = _MetaGraphs(restorable)

        def save(step, inference):
            with tensorflow_internals.variable_ops():  # (TF1's Saver reads a partitioned variable's slices' op)
                prefix = saver.save(None, os.path.join(self.model_dir, CHECKPOINT_NAME), global_step=step,
                                    write_meta_graph=False)
            atomic.write_bytes(prefix + ".meta", metas.serialized(inference))
            return prefix
        return save

    def _object_writer(self, checkpoint):
        manager = tf.train.CheckpointManager(checkpoint, self.model_dir, max_to_keep=self._max_to_keep,
                                             keep_checkpoint_every_n_hours=self._keep_hours,
                                             checkpoint_name=CHECKPOINT_NAME)
        return lambda step, inference: manager.save(checkpoint_number=step)

    def _write_failure(self, step, variables, error):
        """What went wrong, with the bytes the checkpoint needs and what the disk has free."""
        needed = sum(v.shape.num_elements() * v.dtype.size for v in variables.values())
        text = (f"cannot write checkpoint {os.path.join(self.model_dir, f'{CHECKPOINT_NAME}-{step}')} "
                f"({first_line(error)}); it needs about {_bytes(needed)}")
        try:
            text += f" and {_bytes(shutil.disk_usage(self.model_dir).free)} are free"
        except OSError:  # a remote file system
            pass
        return (text + ". The earlier checkpoints are untouched: free some space (or fix the permissions) "
                "and run the same command again to resume from the newest.")


class _SavedAgain(tensorflow_internals.SaveableObject):
    """A variable's value written under one more name (a slot tf.estimator 2.15 saved once per part, see
    common.state.part_slots); read back by common.state.checkpoints, never restored through TF1's Saver."""

    def __init__(self, variable, name):
        spec = tensorflow_internals.SaveSpec(variable.read_value, "", name, dtype=variable.dtype,
                                             device=variable.device)
        super().__init__(None, [spec], name)


class _MetaGraphs:
    """The `.meta` files of one set of variables, each made once: the variables alone, and the inference graph
    (or, where it cannot be had, the variables alone again, saying why once)."""

    def __init__(self, restorable):
        self._restorable = restorable
        self._variables_only = None
        self._inference = None

    def serialized(self, inference):
        if inference is not None and self._inference is None:
            self._inference = self._inference_graph(inference())
        if self._inference is not None:
            return self._inference
        if self._variables_only is None:
            self._variables_only = meta_graph.variables_meta_graph(self._restorable)
        return self._variables_only

    def _inference_graph(self, found):
        if found.function is not None:
            try:
                return inference_meta_graph.inference_meta_graph(found.function, self._restorable,
                                                                 checkpoints.GLOBAL_STEP)
            except Exception as error:  # (NotConvertible, or a graph TF1's importer refuses: a save must not fail)
                found = inference_meta_graph.InferenceFunction(None, first_line(error))
        logging.info("The .meta beside each checkpoint holds the variables alone, not model_fn's graph: %s",
                     found.why_not)
        return meta_graph.variables_meta_graph(self._restorable)
