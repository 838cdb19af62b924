"""What each mode restores before it runs: the newest checkpoint that loads, or warm start.

Training restores all state (the model, the optimizer, the global step);
evaluation, prediction and export restore the model's variables and the
global step. A training run with no checkpoint in model_dir warm-starts,
when the Estimator was given warm_start_from, on the chief.
"""

from absl import logging

from common.spec.model_fn import ModeKeys
from common.state import checkpoints
from common.state.warm_start import warm_start


class ModelState:
    """The model's state as model_dir holds it.

    model: the engine's ModelBuilder; store: the CheckpointStore writes go to
    (a non-chief host trains with one of its own, see Estimator.train).
    """

    def __init__(self, model, store, warm_start_settings=None, is_chief=True):
        self.model = model
        self.store = store
        self._warm_start = warm_start_settings
        self._is_chief = is_chief

    def restore(self, mode, checkpoint_path=None):
        """Loads state for `mode` from checkpoint_path, else from the newest
        checkpoint in model_dir that loads; returns the one used (or None)."""
        training = mode == ModeKeys.TRAIN
        state = self.model.named_state(with_optimizer=training)
        model_names = [t.name for t in self.model.model_variables]
        names = list(state) if training else [checkpoints.GLOBAL_STEP] + model_names
        if checkpoint_path:
            checkpoints.restore(checkpoint_path, state, names)
            path = checkpoint_path
        else:
            path = self.store.restore_newest(lambda prefix: checkpoints.restore(prefix, state, names))
        if path:
            if not training:
                logging.info("Restoring parameters from %s", path)
            return path
        if training and self._warm_start is not None and self._is_chief:
            warm_start(self._warm_start, state, model_names,
                       [t.name for t in self.model.model_variables if t.trainable])
        elif not training:
            logging.warning(
                "Could not find trained model in model_dir: %s, running initialization to %s.",
                self.store.model_dir, "evaluate" if mode == ModeKeys.EVAL else "predict")
        return None
