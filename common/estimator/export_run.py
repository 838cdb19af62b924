"""One export_saved_model call: model_fn traced once in PREDICT mode, its signatures, the checkpoint restored.

The default receiver's outputs function (features -> every export output's
tensors, one tf.function) is the PREDICT probe too: tracing it to learn the
spec's export outputs is the trace every signature of that receiver calls,
so model_fn is traced once for the whole export, as tf.estimator built its
graph once.
"""

import tensorflow as tf

from common.export import receivers, saved_model
from common.spec import export_outputs
from common.spec.model_fn import ModeKeys


def export(parts, export_dir_base, serving_input_receiver_fn, checkpoint_path, assets_extra, as_text):
    """Writes the SavedModel of `checkpoint_path` (None: the model as it starts) under export_dir_base;
    returns its path. parts: the Estimator's EstimatorParts."""
    model = parts.model
    signature_inputs = receivers.serving_inputs(serving_input_receiver_fn)

    def outputs_fn(features):
        spec = model.call(features, None, ModeKeys.PREDICT).spec
        if spec.export_outputs is None:  # tf.estimator's default: PredictOutput(predictions)
            return {receivers.DEFAULT_SIGNATURE: export_outputs.PredictOutput(spec.predictions).outputs()}
        return {key: output.outputs() for key, output in saved_model.with_default(spec.export_outputs).items()}

    def traced_signatures():
        default = signature_inputs[receivers.DEFAULT_SIGNATURE]
        default_outputs = tf.function(outputs_fn, autograph=False)
        with saved_model.resources_made() as resources:
            info = model.probe_step(ModeKeys.PREDICT, default_outputs, (_feature_signature(default),))
            with model.scope():
                functions = saved_model.signatures(
                    signature_inputs, saved_model.with_default(info.export_outputs),
                    lambda group: default_outputs if group == receivers.DEFAULT_SIGNATURE
                    else tf.function(outputs_fn, autograph=False))
        return functions, list(resources), info

    # (kept per receiver: an exporter's later exports serve the same functions, over the restored variables)
    key = ("export", serving_input_receiver_fn, tuple((group, tuple(sorted(inputs.specs.items())))
                                                      for group, inputs in signature_inputs.items()))
    functions, resources, info = parts.loops.get(key, traced_signatures)
    parts.state.restore(ModeKeys.PREDICT, checkpoint_path, info)
    module = tf.Module()
    module.model_variables = [t.variable for t in model.model_variables]
    module.resources = resources
    return saved_model.write_saved_model(export_dir_base, module, functions, assets_extra, as_text,
                                         parts.export_tag_sets)


def _feature_signature(inputs):
    """The type specs of the features a receiver gives (its features_fn traced alone: parsing, no model)."""
    names = sorted(inputs.specs)
    features = tf.function(lambda *received: inputs.features_fn(dict(zip(names, received))), autograph=False)
    traced = features.get_concrete_function(*(inputs.specs[name] for name in names))
    return tf.nest.map_structure(tf.type_spec_from_value, traced.structured_outputs)
