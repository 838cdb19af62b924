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
import re

import tensorflow as tf

from common.internals import tensorflow_internals

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
    """Built once per set of variables (a model dir's writer is made at every train() call), as the GraphDef
    TF1's Variable and Saver made, node by node: making them through TensorFlow's Python costs about 1 ms a
    variable, before the first step (BERT-base's Adam state: most of a second)."""
    meta_graph, names, variables = tf.compat.v1.MetaGraphDef(), _Names(), []
    graph = meta_graph.graph_def
    graph.versions.producer = tf.version.GRAPH_DEF_VERSION
    graph.versions.min_consumer = tf.version.GRAPH_DEF_VERSION_MIN_CONSUMER
    for name, shape, dtype, trainable in specs:
        dtype = tf.as_dtype(dtype)
        op = names.unique(op_name(name))
        zeros = names.unique(f"{op}/Initializer/zeros")
        zero = b"" if dtype == tf.string else dtype.as_numpy_dtype(0)
        _node(graph, zeros, "Const", dtype=dtype, value=tf.make_tensor_proto(zero, dtype, shape))
        _node(graph, op, "VariableV2", dtype=dtype, shape=tf.TensorShape(shape).as_proto())
        assign = _node(graph, names.unique(f"{op}/Assign"), "Assign", [op, zeros], T=dtype)
        read = _node(graph, names.unique(f"{op}/read"), "Identity", [op], T=dtype)
        variable_def = tensorflow_internals.VariableDef(variable_name=f"{op}:0", initializer_name=assign,
                                                snapshot_name=f"{read}:0", initial_value_name=f"{zeros}:0",
                                                trainable=trainable).SerializeToString()
        for collection in ("variables",) + (("trainable_variables",) if trainable else ()) + (
                ("global_step",) if name == tf.compat.v1.GraphKeys.GLOBAL_STEP else ()):
            meta_graph.collection_def[collection].bytes_list.value.append(variable_def)
        variables.append((name, op, dtype))
    scope = names.unique("save", scope=True)
    _saver(graph, scope, variables)
    meta_graph.saver_def.CopyFrom(tf.compat.v1.train.SaverDef(
        filename_tensor_name=f"{scope}/Const:0", save_tensor_name=f"{scope}/control_dependency:0",
        restore_op_name=f"{scope}/restore_all", max_to_keep=5, keep_checkpoint_every_n_hours=10000.0,
        version=tf.compat.v1.train.SaverDef.V2))
    meta_graph.meta_info_def.meta_graph_version = VARIABLES_ONLY_VERSION
    meta_graph.meta_info_def.tensorflow_version = tf.version.VERSION
    return meta_graph.SerializeToString()


def _saver(graph, scope, variables):
    """TF1 Saver's save and restore ops (V2 format, unsharded) of (checkpoint name, op name, dtype)."""
    strings = tf.string
    _node(graph, f"{scope}/filename/input", "Const", dtype=strings, value=tf.make_tensor_proto("model"))
    _node(graph, f"{scope}/filename", "PlaceholderWithDefault", [f"{scope}/filename/input"], dtype=strings,
          shape=tf.TensorShape([]).as_proto())
    _node(graph, f"{scope}/Const", "PlaceholderWithDefault", [f"{scope}/filename"], dtype=strings,
          shape=tf.TensorShape([]).as_proto())
    names = tf.make_tensor_proto([name for name, _, _ in variables], strings)
    slices = tf.make_tensor_proto([""] * len(variables), strings, [len(variables)])
    dtypes = [dtype.as_datatype_enum for _, _, dtype in variables]
    for kind in ("SaveV2", "RestoreV2"):
        _node(graph, f"{scope}/{kind}/tensor_names", "Const", dtype=strings, value=names)
        _node(graph, f"{scope}/{kind}/shape_and_slices", "Const", dtype=strings, value=slices)
    io = [f"{scope}/Const", f"{scope}/SaveV2/tensor_names", f"{scope}/SaveV2/shape_and_slices"]
    _node(graph, f"{scope}/SaveV2", "SaveV2", io + [op for _, op, _ in variables], dtypes=dtypes)
    _node(graph, f"{scope}/control_dependency", "Identity", [f"{scope}/Const", f"^{scope}/SaveV2"], T=strings)
    io = [f"{scope}/Const", f"{scope}/RestoreV2/tensor_names", f"{scope}/RestoreV2/shape_and_slices"]
    _node(graph, f"{scope}/RestoreV2", "RestoreV2", io, dtypes=dtypes)
    assigns = [_node(graph, f"{scope}/Assign_{i}", "Assign", [op, f"{scope}/RestoreV2:{i}"], T=dtype)
               for i, (_, op, dtype) in enumerate(variables)]
    _node(graph, f"{scope}/restore_all", "NoOp", [f"^{assign}" for assign in assigns])


def _node(graph, name, op, inputs=(), **attrs):
    """Adds a NodeDef; returns its name. attrs: a DType, a TensorShapeProto, a TensorProto or a list of
    DataType enums each."""
    node = graph.node.add(name=name, op=op, input=list(inputs))
    for key, value in attrs.items():
        if isinstance(value, tf.DType):
            node.attr[key].type = value.as_datatype_enum
        elif isinstance(value, list):
            node.attr[key].list.type.extend(value)
        elif key == "shape":
            node.attr[key].shape.CopyFrom(value)
        else:
            node.attr[key].tensor.CopyFrom(value)
    return name


class _Names:
    """Op names given once each, a taken one suffixed _1, _2... as a TF1 graph suffixed them."""

    def __init__(self):
        self._taken = set()

    def unique(self, name, scope=False):
        """scope: a name no op's name is under either (the ops made under it take any name)."""
        candidate, count = name, 0
        while candidate in self._taken or scope and any(taken.startswith(candidate + "/") for taken in self._taken):
            count += 1
            candidate = f"{name}_{count}"
        self._taken.add(candidate)
        return candidate


def op_name(name):
    """`name` where a graph takes it as an op's name; else the nearest name it takes (the Saver still restores
    the variable from the checkpoint's `name`)."""
    op_name = re.sub(r"[^A-Za-z0-9_.\\/>-]", "_", name)
    return op_name if re.match(r"[A-Za-z0-9.]", op_name) else "v" + op_name
