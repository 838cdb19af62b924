"""tf.compat.v1.train.Saver made inside model_fn: a record of what it asked, building nothing.

TF1 programs made a Saver in model_fn to hand tf.estimator through
`Scaffold(saver=...)` (a sharded one, a subset of the variables). In TF1's
graph its save and restore ops ran only when a session ran them; traced into
this project's step function they would run at every step (a restore of a
file that is not there, `./model.*` written beside the program). So inside
model_fn the Saver records its arguments and builds nothing: the model dir's
checkpoints are the Estimator's, under the variables' own names, every
`RunConfig.save_checkpoints_*`, keeping `keep_checkpoint_max`. Outside
model_fn it is TensorFlow's Saver.

import_meta_graph refuses, by name, the graphless `.meta` files this project
wrote beside its checkpoints before they held the variables and their Saver
(common.state.meta_graph): TensorFlow's own returned None on them, and the
program failed later on `None.restore`.
"""

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.state.meta_graph import GRAPHLESS_VERSION
from common.variables import registry


class Saver:
    """tf.compat.v1.train.Saver (see the module)."""

    def __new__(cls, var_list=None, *args, **kwargs):
        if not registry.running_model_fn():
            return tf.compat.v1.train.Saver(var_list, *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=None, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        self.var_list = var_list
        self.max_to_keep = max_to_keep
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        if isinstance(var_list, dict) and any(key != getattr(v, "name", key).split(":")[0]
                                              for key, v in var_list.items()):
            logging.info("tf.train.Saver in model_fn names variables otherwise than they are named: evaluation and "
                         "prediction restore them from those names (common.estimator.model_state); the "
                         "Estimator's checkpoints keep the variables' own names")

    def _refuse(self, what):
        raise RuntimeError(f"Saver.{what}() inside model_fn: there is no session here; the Estimator writes and "
                           "restores the model dir's checkpoints itself (RunConfig.save_checkpoints_steps / "
                           "keep_checkpoint_max, warm_start_from, tf.compat.v1.train.init_from_checkpoint)")

    def save(self, *args, **kwargs):
        self._refuse("save")

    def restore(self, *args, **kwargs):
        self._refuse("restore")


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """tf.compat.v1.train.import_meta_graph, refusing this project's graphless `.meta` files by name."""
    if isinstance(meta_graph_or_file, str) and tf.io.gfile.exists(meta_graph_or_file):
        meta_graph = tf.compat.v1.MetaGraphDef()
        with tf.io.gfile.GFile(meta_graph_or_file, "rb") as meta_file:
            meta_graph.ParseFromString(meta_file.read())
        if meta_graph.meta_info_def.meta_graph_version == GRAPHLESS_VERSION:
            raise ValueError(
                f"{meta_graph_or_file} holds no graph: this project wrote one beside each checkpoint for the tools "
                "that copy checkpoint files, and traces model_fn anew instead of saving a graph. Read the "
                f"checkpoint {meta_graph_or_file[:-len('.meta')]} by name (tf.train.load_checkpoint(path), "
                "Estimator.get_variable_value(name)), serve the model from export_saved_model, or build it in "
                "model_fn and restore through the Estimator")
    return tf.compat.v1.train.import_meta_graph(meta_graph_or_file, clear_devices, import_scope, **kwargs)
