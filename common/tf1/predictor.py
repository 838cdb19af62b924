"""tf.contrib.predictor.from_saved_model: a callable over one signature of a SavedModel, as TF1 gave it.

TF1 programs checked their export by loading it back and calling it with a
dict of plain values (`predictor({"sms": ["win cash now"]})`), getting a dict
of numpy arrays. The predictor here does the same through
tf.saved_model.load: the values are converted to each input's dtype, inputs
the signature lacks or leaves unfed are named.
"""

import tensorflow as tf

DEFAULT_SIGNATURE = "serving_default"


class SavedModelPredictor:
    """predictor(input_dict) -> {output name: numpy array} for one signature of a SavedModel."""

    def __init__(self, export_dir, signature_def_key=None, tags=None):
        self._export_dir = export_dir
        self._loaded = tf.saved_model.load(export_dir, tags=tags)
        key = signature_def_key or DEFAULT_SIGNATURE
        if key not in self._loaded.signatures:
            raise ValueError(f"from_saved_model: {export_dir} has no signature {key!r}; it has "
                             f"{', '.join(sorted(self._loaded.signatures)) or 'none'}")
        self._signature_key = key
        self._function = self._loaded.signatures[key]
        _, self._input_specs = self._function.structured_input_signature

    @property
    def feed_tensors(self):
        """The signature's inputs: name -> TensorSpec."""
        return dict(self._input_specs)

    @property
    def fetch_tensors(self):
        """The signature's outputs: name -> TensorSpec."""
        return dict(self._function.structured_outputs)

    def __call__(self, input_dict):
        unknown = sorted(set(input_dict) - set(self._input_specs))
        missing = sorted(set(self._input_specs) - set(input_dict))
        if unknown or missing:
            raise ValueError(f"predictor over {self._export_dir} (signature {self._signature_key!r}) takes "
                             f"{sorted(self._input_specs)}; " + "; ".join(
                                 part for part in (f"not its inputs: {unknown}" if unknown else "",
                                                   f"not fed: {missing}" if missing else "") if part))
        fed = {name: tf.convert_to_tensor(value, dtype=self._input_specs[name].dtype)
               for name, value in input_dict.items()}
        return {name: value.numpy() for name, value in self._function(**fed).items()}


def from_saved_model(export_dir, signature_def_key=None, signature_def=None, input_names=None, output_names=None,
                     tags=None, graph=None, config=None):
    """tf.contrib.predictor.from_saved_model (see the module); the graph and session arguments of TF1 have
    nothing to act on and are refused when given."""
    del config  # a TF1 session's options: nothing to configure here
    for argument, value in (("signature_def", signature_def), ("input_names", input_names),
                            ("output_names", output_names), ("graph", graph)):
        if value is not None:
            raise ValueError(f"from_saved_model: {argument} is not supported; name the signature with "
                             "signature_def_key")
    return SavedModelPredictor(export_dir, signature_def_key, tags)
