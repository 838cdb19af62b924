"""model.ckpt-<step>.meta as TF1 wrote it: a graph of the model that TF1's importer and Saver take.

tf.estimator wrote its graph beside each checkpoint, and programs read it in
a TF1 session: `saver = tf.compat.v1.train.import_meta_graph(path + ".meta")`,
`saver.restore(sess, path)`, then run the model's tensors by name or freeze
them (convert_variables_to_constants). Here model_fn is traced as a TF2
function; this turns such a function (model_fn in PREDICT mode over the
training features) into that graph: its ops under their own names, a
placeholder per feature named by its key, a resource variable per variable
it reads under its checkpoint name, a Saver restoring them from the
checkpoint beside the file, a copy of each lookup table it reads (filled by
tf.compat.v1.tables_initializer()), and a `serving_default` SignatureDef
naming the features and the predictions. What the function reads that no
checkpoint holds and no table is (a part of a partitioned variable) cannot
be restored in TF1's session: that is refused (NotConvertible) and the
caller writes the variables-only graph (common.state.meta_graph) instead.
"""

import dataclasses
from typing import Optional

import tensorflow as tf

from common.state import meta_graph

INFERENCE_VERSION = ("inference graph: written by common (tf.estimator on TensorFlow 2); model_fn in PREDICT mode "
                     "over the training features, its Saver restores the checkpoint beside it")


# A lookup table of more entries is not copied into the graph (its GraphDef would near protobuf's 2 GB limit).
MAX_TABLE_ENTRIES = 2_000_000


class NotConvertible(ValueError):
    """The function reads a resource no checkpoint name restores."""


@dataclasses.dataclass(frozen=True)
class InferenceFunction:
    """function: the ConcreteFunction of features -> predictions the `.meta` holds, or None; why_not: the
    reason it is None (the `.meta` then holds the variables alone)."""

    function: Optional[object]
    why_not: str = ""


def inference_meta_graph(function, variables, global_step=None):
    """The serialized MetaGraphDef of `function`'s graph.

    function: a ConcreteFunction of the features (its argument placeholders
    named by feature key) returning the predictions, a tensor or a dict of
    them. variables: {the name the checkpoint holds it by: variable}, for
    every variable the function may read (others are left out). global_step:
    the global step's checkpoint name, made the graph's global step (restored
    with the rest) when given.
    Raises NotConvertible naming a resource the function reads that no
    variable in `variables` is.
    """
    by_handle = {variable.handle.ref(): (name, variable) for name, variable in variables.items()
                 if getattr(variable, "handle", None) is not None}
    captured = {internal.op.name: (external, internal) for external, internal in function.graph.captures}
    arguments = [tensor for tensor in function.inputs if tensor.op.name not in captured]
    tables = {name: _table_contents(internal, external) for name, (external, internal) in captured.items()
              if external.dtype == tf.resource and external.ref() not in by_handle}
    graph_def = function.graph.as_graph_def()
    replaced = set(captured) | {tensor.op.name for tensor in arguments}
    kept = [node for node in graph_def.node if node.name not in replaced]
    for node in kept:  # (colocations with a variable's capture, which the graph has no more)
        node.attr.pop("_class", None)
    del graph_def.node[:]
    graph_def.node.extend(kept)
    graph = tf.Graph()
    with graph.as_default():
        input_map, saved = {}, {}
        for internal_name, (external, internal) in captured.items():
            input_map[f"{internal_name}:0"] = (_table(internal_name, *tables[internal_name]) if internal_name in tables
                                               else _stand_in(internal_name, external, by_handle, saved))
        for name, variable in variables.items():  # (the rest of the checkpoint: optimizer state, as TF1's graph had)
            if name not in saved and name != global_step and getattr(variable, "handle", None) is not None:
                _variable(name, variable, saved)
        if global_step is not None:
            saved[global_step] = _global_step(saved.get(global_step))
        placeholders = {}
        for tensor in arguments:
            placeholders[tensor.op.name] = tf.compat.v1.placeholder(tensor.dtype, tensor.shape, name=tensor.op.name)
            input_map[tensor.name] = placeholders[tensor.op.name]
        outputs = tf.nest.flatten(function.structured_outputs)
        read = {name.lstrip("^").split(":")[0] for node in kept for name in node.input}
        imported = tf.graph_util.import_graph_def(  # (a feature no op reads stays unmapped: TF refuses that map)
            graph_def, input_map={name: t for name, t in input_map.items() if name.split(":")[0] in read}, name="",
            return_elements=[tensor.name for tensor in outputs])
        saver = tf.compat.v1.train.Saver(var_list=saved, save_relative_paths=True, allow_empty=True)
        exported = tf.compat.v1.train.export_meta_graph(graph=graph, saver_def=saver.as_saver_def(),
                                                        clear_devices=True)  # (a tower's GPU: not the reader's)
        exported.signature_def["serving_default"].CopyFrom(tf.compat.v1.saved_model.build_signature_def(
            inputs={name: _tensor_info(placeholder) for name, placeholder in placeholders.items()},
            outputs={key: _tensor_info(tensor) for key, tensor in zip(_output_keys(function.structured_outputs),
                                                                       imported)},
            method_name=tf.compat.v1.saved_model.PREDICT_METHOD_NAME))
    exported.meta_info_def.meta_graph_version = INFERENCE_VERSION
    return exported.SerializeToString()


def _stand_in(internal_name, external, by_handle, saved):
    """What the function's capture `internal_name` reads in the TF1 graph: a constant's value, or a variable
    under its checkpoint name (by_handle: handle ref -> (name, variable); one TF1 variable per checkpoint name,
    recorded in `saved`)."""
    if external.dtype != tf.resource:
        return tf.constant(external.numpy(), name=f"{internal_name}/value")
    name, variable = by_handle[external.ref()]
    return _variable(name, variable, saved).handle


def _table_contents(internal, external):
    """(key dtype, value dtype, keys, values) of the lookup table (a vocabulary column's) a capture is, read now.
    Raises NotConvertible where the capture is no table the function looks up in."""
    finds = [op for op in internal.consumers() if op.type == "LookupTableFindV2"]
    if not finds:
        raise NotConvertible(f"model_fn reads {internal.op.name}, a resource no checkpoint name restores (a "
                             "variable made outside model_fn, or a part of a partitioned variable)")
    key_dtype, value_dtype = finds[0].get_attr("Tin"), finds[0].get_attr("Tout")
    size = int(tf.raw_ops.LookupTableSizeV2(table_handle=external))
    if size > MAX_TABLE_ENTRIES:
        raise NotConvertible(f"model_fn reads a lookup table of {size} entries ({internal.op.name}), more than the "
                             f".meta copies ({MAX_TABLE_ENTRIES})")
    keys, values = tf.raw_ops.LookupTableExportV2(table_handle=external, Tkeys=key_dtype, Tvalues=value_dtype)
    return key_dtype, value_dtype, keys.numpy(), values.numpy()


def _table(internal_name, key_dtype, value_dtype, keys, values):
    """The TF1 graph's copy of a lookup table: a hash table of its keys and values, filled by an op in the
    TABLE_INITIALIZERS collection (tf.compat.v1.tables_initializer() runs it, as it ran tf.estimator's graph's)."""
    table = tf.raw_ops.HashTableV2(key_dtype=key_dtype, value_dtype=value_dtype, name=f"{internal_name}_table")
    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.TABLE_INITIALIZERS, tf.raw_ops.InitializeTableV2(
        table_handle=table, keys=tf.constant(keys, key_dtype), values=tf.constant(values, value_dtype)))
    return table


def _variable(name, variable, saved):
    """The TF1 graph's resource variable of checkpoint name `name` (made once, recorded in `saved`), shaped and
    typed as `variable`, in the trainable collection when it is trainable."""
    if name not in saved:
        dtype = tf.as_dtype(variable.dtype).base_dtype
        zeros = tf.zeros(variable.shape, dtype, name=f"{meta_graph.op_name(name)}/Initializer/zeros")
        saved[name] = tf.compat.v1.Variable(zeros, name=meta_graph.op_name(name), use_resource=True,
                                            trainable=bool(getattr(variable, "trainable", False)))
    return saved[name]


def _tensor_info(tensor):
    """A dense tensor's TensorInfo (tf.compat.v1.saved_model.build_tensor_info's, without its deprecation
    warning)."""
    return tf.compat.v1.TensorInfo(name=tensor.name, dtype=tensor.dtype.as_datatype_enum,
                                   tensor_shape=tensor.shape.as_proto())


def _global_step(variable):
    """The graph's global step: the variable the function reads as the step, else a new one; in the collection
    TF1's get_global_step reads."""
    if variable is None:
        variable = tf.compat.v1.train.get_or_create_global_step()
    elif variable not in tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.GLOBAL_STEP):
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.GLOBAL_STEP, variable)
    return variable


def _output_keys(structured_outputs):
    """A key for each flat output, in tf.nest's order: a dict's keys (a nested one's joined by "/"), "output" for
    a lone tensor, "output_<i>" for a sequence's."""
    if tf.is_tensor(structured_outputs):
        return ["output"]
    paths = _paths(structured_outputs, "")
    return paths if isinstance(structured_outputs, dict) else [f"output_{path}" for path in paths]


def _paths(structure, prefix):
    """The "/"-joined path of each leaf, in tf.nest.flatten's order (a dict's keys sorted)."""
    if isinstance(structure, dict):
        return [path for key in sorted(structure) for path in _paths(structure[key], f"{prefix}{key}/")]
    if isinstance(structure, (list, tuple)):
        return [path for i, value in enumerate(structure) for path in _paths(value, f"{prefix}{i}/")]
    return [prefix.rstrip("/")]
