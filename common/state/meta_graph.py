"""The `.meta` file beside each checkpoint: TF1's graph of the checkpoint's variables and a Saver for them.

tf.estimator wrote model.ckpt-<step>.meta beside each checkpoint. Programs
copy, rename and delete it with the checkpoint's other files (ALBERT's
best-checkpoint logic), and restore a model dir in a TF1 session with
`saver = tf.compat.v1.train.import_meta_graph(path + ".meta")` then
`saver.restore(sess, path)`. There is no one graph of model_fn here (it is
traced per mode and tower layout), so this one holds the variables alone,
under the checkpoint's names, shapes and dtypes, with the Saver that restores
them: the restore works and each variable is in the graph by its name; the
model's other ops are not (model_fn builds them; export_saved_model serves
them).
"""

import functools

import tensorflow as tf

# The version of the graphless `.meta` this project wrote before (model dirs keep them).
GRAPHLESS_VERSION = ("no graph: written by common (tf.estimator on TensorFlow 2); the checkpoint beside it "
                     "restores by variable name")
VARIABLES_ONLY_VERSION = ("variables only: written by common (tf.estimator on TensorFlow 2); its Saver restores "
                          "the checkpoint beside it, model_fn's other ops are not in it")


def variables_meta_graph(variables):
    """The serialized MetaGraphDef of {saved name: variable (anything with shape, dtype, trainable)}: a TF1
    variable of each, in the global (and trainable) collections, the global step in its own, and a Saver of
    them by those names."""
    return _meta_graph(tuple(sorted((name, tuple(tf.TensorShape(variable.shape).as_list()),
                                     tf.as_dtype(variable.dtype).base_dtype.name,
                                     bool(getattr(variable, "trainable", False)))
                                    for name, variable in variables.items())))


@functools.lru_cache(maxsize=8)
def _meta_graph(specs):
    """Built once per set of variables (a model dir's writer is made at every train() call)."""
    graph = tf.Graph()
    with graph.as_default():
        saved = {}
        for name, shape, dtype, trainable in specs:
            saved[name] = tf.compat.v1.Variable(tf.zeros(shape, dtype), name=name, trainable=trainable,
                                                use_resource=False)
            if name == tf.compat.v1.GraphKeys.GLOBAL_STEP:
                tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.GLOBAL_STEP, saved[name])
        saver = tf.compat.v1.train.Saver(var_list=saved, allow_empty=True)
        meta_graph = saver.export_meta_graph()
    meta_graph.meta_info_def.meta_graph_version = VARIABLES_ONLY_VERSION
    return meta_graph.SerializeToString()
