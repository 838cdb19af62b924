"""SavedModel export: the served functions, their method names, and the atomic write.

What the signatures take is common.receivers'; what they return and the
method TensorFlow Serving calls them by is common.export_outputs'.
"""

import contextlib
import dataclasses
import logging as py_logging
import os
import time
from typing import Dict

import tensorflow as tf
from google.protobuf import text_format
from tensorflow.compat.v1 import logging

from common.export.receivers import DEFAULT_SIGNATURE
from common.internals import tensorflow_internals
from common.spec import export_outputs
from common.state import model_dir_lock


@dataclasses.dataclass
class ExportFunctions:
    """What an export serves: signature name -> concrete function; signature name -> method name, where not
    predict; and, for a signature over a TF1 receiver whose derived inputs a caller may leave unfed,
    signature name -> the function fed its placeholders alone (saved as the module's `placeholders_fed`, which
    common.contrib.predictor calls, as TF1's predictor fed a session a part of a signature's inputs)."""

    signatures: Dict[str, object]
    methods: Dict[str, str] = dataclasses.field(default_factory=dict)
    placeholders_fed: Dict[str, object] = dataclasses.field(default_factory=dict)


def signatures(inputs, output_classes, group_outputs):
    """ExportFunctions for every receiver group and output key, named as
    tf.estimator named them: the output key for the default receiver; the
    alternative's name for its default output, "<alternative>:<key>" for others.
    A classify or regress output over a receiver that is not one string tensor
    is left out with a warning, as tf.estimator 2.15 left it out (a v1
    premade classifier behind a placeholder receiver exports `predict` alone);
    an export that would hold no signature is refused.

    inputs: group -> receivers.SignatureInputs; output_classes: key ->
    ExportOutput class; group_outputs(group) -> the group's tf.function of features -> {key: that output's
    tensors}, which all its signatures call (model_fn traced once per group, not once per signature).
    """
    functions, left_out = ExportFunctions({}), []
    for group, group_inputs in inputs.items():
        outputs = group_outputs(group)
        for key, output_class in output_classes.items():
            if group == DEFAULT_SIGNATURE:
                name = key
            else:
                name = group if key == DEFAULT_SIGNATURE else f"{group}:{key}"
            method = export_outputs.method_for(output_class, group_inputs.specs)
            if method != output_class.method:
                left_out.append(f"{name} ({output_class.__name__})")
                continue
            if method != export_outputs.PREDICT_METHOD:
                functions.methods[name] = method
            served = lambda features, key=key, outputs=outputs: outputs(features)[key]  # noqa: E731
            functions.signatures[name] = serving_function(group_inputs, served, method).get_concrete_function()
            if group_inputs.placeholders_alone is not None:
                functions.placeholders_fed[name] = serving_function(
                    group_inputs.placeholders_alone, served, export_outputs.PREDICT_METHOD).get_concrete_function()
    if left_out:
        logging.warning("Signatures left out of the export, as tf.estimator left them out: %s (classify and "
                        "regress signatures take one string input of serialized tf.Examples; this receiver gives "
                        "other inputs)", ", ".join(left_out))
    if not functions.signatures:
        raise ValueError(f"the export would hold no signature: {', '.join(left_out)} take one string input of "
                         "serialized tf.Examples (build_parsing_serving_input_receiver_fn); export a PredictOutput "
                         "for this receiver")
    return functions


@contextlib.contextmanager
def resources_made():
    """Yields a list that collects the resources (lookup tables: a feature column's vocabulary, a label
    table) made inside, for the exported module to track: a SavedModel refuses a function that captures
    an untracked one. TensorFlow's public API has no resource tracker; tf.saved_model's own is used."""
    tracker = tensorflow_internals.ResourceTracker()
    with tensorflow_internals.resource_tracker_scope(tracker):
        yield tracker.resources


def with_default(outputs):
    """export_outputs (key -> output, or output class) with serving_default always
    present: a spec's only output is also the default, as in tf.estimator;
    None stands for the predictions, served by default."""
    if outputs is None:
        return {DEFAULT_SIGNATURE: export_outputs.PredictOutput}
    keyed = dict(outputs)
    if DEFAULT_SIGNATURE not in keyed:
        if len(keyed) > 1:
            raise ValueError(
                f"export_outputs has {len(keyed)} outputs ({', '.join(sorted(keyed))}) and none is "
                f"{DEFAULT_SIGNATURE!r}: key the one served by default so")
        keyed[DEFAULT_SIGNATURE] = next(iter(keyed.values()))
    return keyed


def serving_function(inputs, outputs_fn, method):
    """A tf.function taking the signature's tensors by name and returning outputs_fn(features).

    A classify or regress signature's one input is named "inputs", as
    TensorFlow Serving asks for it.
    """
    names = sorted(inputs.specs)
    given = [export_outputs.EXAMPLES_INPUT] if method != export_outputs.PREDICT_METHOD else names
    specs = [tf.TensorSpec(inputs.specs[n].shape, inputs.specs[n].dtype, name=g) for n, g in zip(names, given)]

    @tf.function(input_signature=specs, autograph=False)  # (model_fn untransformed: common.engine.loops)
    def serve(*received):
        return outputs_fn(inputs.features_fn(dict(zip(names, received))))

    return serve


def _set_method_names_and_tags(export_dir, methods, tag_sets):
    """Rewrites the method name of each signature in `methods` (TF2's writer gives every signature the predict
    method), and writes the MetaGraph once per tag set (TF2's writer writes one, tagged "serve")."""
    path = os.path.join(export_dir, "saved_model.pb")
    saved_model = tensorflow_internals.SavedModel()
    with tf.io.gfile.GFile(path, "rb") as f:
        saved_model.ParseFromString(f.read())
    for meta_graph in saved_model.meta_graphs:
        for name, method in methods.items():
            meta_graph.signature_def[name].method_name = method
    written = saved_model.meta_graphs[0]
    copies = []
    for tags in tag_sets:
        copy = type(written)()
        copy.CopyFrom(written)
        copy.meta_info_def.ClearField("tags")
        copy.meta_info_def.tags.extend(tags)
        copies.append(copy)
    del saved_model.meta_graphs[:]
    saved_model.meta_graphs.extend(copies)
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(saved_model.SerializeToString())


@contextlib.contextmanager
def _root_logger_left_alone():
    """TensorFlow's SavedModel writer logs through absl, whose first line gives a root logger without handlers
    one (logging.basicConfig): every TensorFlow line after it then printed twice in a plain script, as
    tf.estimator's exports never made them. While the writer runs, a root logger without handlers holds a
    NullHandler (the writer's own absl lines are dropped), and is left as it was afterwards."""
    root = py_logging.getLogger()
    if root.handlers:
        yield
        return
    held = py_logging.NullHandler()
    root.addHandler(held)
    try:
        yield
    finally:
        root.removeHandler(held)


def remove_stale_temp_exports(export_dir_base):
    """Removes the temp-<stamp>[-<pid>] folders of exports whose process is
    gone (killed mid-write); a live exporter's folder is left alone."""
    for path in tf.io.gfile.glob(os.path.join(export_dir_base, "temp-*")):
        parts = os.path.basename(path).split("-")
        pid = int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else None
        if pid is None or not model_dir_lock.process_alive(pid):
            logging.info("Removing %s, left by an interrupted export.", path)
            tf.io.gfile.rmtree(path)


class ExportPath(str):
    """An export's path: a str that also answers .decode(), as the bytes
    tf.estimator's export_saved_model returned did (programs call it)."""

    def decode(self, encoding="utf-8", errors="strict"):
        return str(self)


def check_write_options(owner, assets_extra=None, as_text=False):
    """tf.estimator's export options, checked when given: assets_extra maps a path under the export's
    assets.extra/ (relative, inside it) to an existing file to copy there; as_text is a bool."""
    if not isinstance(as_text, bool):
        raise TypeError(f"{owner}: as_text must be True or False, got {as_text!r}")
    for destination, source in (assets_extra or {}).items():
        parts = os.path.normpath(str(destination)).split(os.sep)
        if os.path.isabs(str(destination)) or ".." in parts:
            raise ValueError(f"{owner}: assets_extra destination {destination!r} must be a relative path inside "
                             "assets.extra/")
        if not tf.io.gfile.exists(source):
            raise ValueError(f"{owner}: assets_extra source {source!r} (for {destination!r}) does not exist")


def _copy_assets_extra(export_dir, assets_extra):
    """Copies each assets_extra file to export_dir/assets.extra/<destination>, as tf.estimator did."""
    for destination, source in (assets_extra or {}).items():
        target = os.path.join(export_dir, "assets.extra", str(destination))
        tf.io.gfile.makedirs(os.path.dirname(target))
        tf.io.gfile.copy(source, target, overwrite=True)


def _rewrite_as_text(export_dir):
    """Replaces saved_model.pb by saved_model.pbtxt, the text form tf.estimator wrote with as_text=True (the
    SavedModel loaders read either)."""
    path = os.path.join(export_dir, "saved_model.pb")
    saved_model = tensorflow_internals.SavedModel()
    with tf.io.gfile.GFile(path, "rb") as f:
        saved_model.ParseFromString(f.read())
    with tf.io.gfile.GFile(os.path.join(export_dir, "saved_model.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(saved_model))
    tf.io.gfile.remove(path)


def write_saved_model(export_dir_base, module, functions, assets_extra=None, as_text=False,
                      tag_sets=(("serve",),)):
    """Saves module serving `functions` (ExportFunctions) under export_dir_base/<timestamp>, via a temp dir and
    a rename, so a failed export never leaves a partial directory under a final name; the temp folders of
    earlier exports that were killed are removed first. assets_extra and as_text as tf.estimator took them
    (check_write_options); tag_sets: the tag sets the MetaGraph is written under, each a copy of it."""
    tf.io.gfile.makedirs(export_dir_base)
    remove_stale_temp_exports(export_dir_base)
    existing = [int(d.strip("/")) for d in tf.io.gfile.listdir(export_dir_base) if d.strip("/").isdigit()]
    stamp = max([int(time.time())] + [s + 1 for s in existing])  # newer than every export there, as names sort
    final = os.path.join(export_dir_base, str(stamp))
    temp = os.path.join(export_dir_base, f"temp-{stamp}-{os.getpid()}")
    try:
        if functions.placeholders_fed:
            setattr(module, export_outputs.PLACEHOLDERS_FED, dict(functions.placeholders_fed))
        with _root_logger_left_alone():
            tf.saved_model.save(module, temp, signatures=functions.signatures)
        if functions.methods or list(tag_sets) != [("serve",)]:
            _set_method_names_and_tags(temp, functions.methods, tag_sets)
        _copy_assets_extra(temp, assets_extra)
        if as_text:
            _rewrite_as_text(temp)
        tf.io.gfile.rename(temp, final)
    finally:
        if tf.io.gfile.exists(temp):
            tf.io.gfile.rmtree(temp)
    logging.info("SavedModel written to: %s", final)
    return ExportPath(final)
