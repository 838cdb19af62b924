"""tf.contrib.predictor.from_saved_model: a callable over one signature of a SavedModel, as TF1 gave it.

TF1 programs checked their export by loading it back and calling it with a
dict of plain values (`predictor({"sms": ["win cash now"]})`), getting a dict
of numpy arrays. The predictor here does the same through
tf.saved_model.load: the values are converted to each input's dtype, inputs
the signature lacks or leaves unfed are named. A TF1 session let a caller
leave unfed the inputs a receiver computed from its placeholders (derived
features); fed the placeholders alone, the predictor calls the export's
function of them (common.export.saved_model's placeholders_fed).
"""

import tensorflow as tf

from common.spec.export_outputs import PLACEHOLDERS_FED

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
        placeholders_fed = getattr(self._loaded, PLACEHOLDERS_FED, {}).get(key)
        self._placeholders_fed = None if placeholders_fed is None else _by_name(placeholders_fed)

    @property
    def feed_tensors(self):
        """The signature's inputs: name -> TensorSpec."""
        return dict(self._input_specs)

    @property
    def fetch_tensors(self):
        """The signature's outputs: name -> TensorSpec."""
        return dict(self._function.structured_outputs)

    def __call__(self, input_dict):
        function, specs = self._function, self._input_specs
        alone = {} if self._placeholders_fed is None else self._placeholders_fed[1]
        if alone and set(input_dict) == set(alone):  # the derived inputs left unfed: computed, as in TF1
            function, specs = self._placeholders_fed
        unknown = sorted(set(input_dict) - set(specs))
        missing = sorted(set(specs) - set(input_dict))
        if unknown or missing:
            raise ValueError(f"predictor over {self._export_dir} (signature {self._signature_key!r}) takes "
                             f"{sorted(specs)}" + (f" (or its placeholders alone: {sorted(alone)})" if alone else "")
                             + "; " + "; ".join(part for part in (f"not its inputs: {unknown}" if unknown else "",
                                                                  f"not fed: {missing}" if missing else "") if part))
        fed = {name: tf.convert_to_tensor(value, dtype=specs[name].dtype) for name, value in input_dict.items()}
        return {name: value.numpy() for name, value in function(**fed).items()}


def _by_name(function):
    """(a function taking its inputs by name, name -> spec) for a saved function that takes them in order."""
    specs, _ = function.structured_input_signature
    names = [spec.name for spec in specs]
    return (lambda **fed: function(*[fed[name] for name in names])), dict(zip(names, specs))


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
