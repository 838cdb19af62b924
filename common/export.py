"""SavedModel export: serving input receivers and the atomic write.

TF1 receivers were placeholders; in TF2 a receiver says which tensors the
served function takes (`receiver_specs`, name -> tf.TensorSpec) and how to
turn them into model_fn features (`features_fn`). Alternatives become extra
signatures, as receiver_tensors_alternatives did.
"""

import dataclasses
import os
import time
from typing import Callable, Dict, Optional

import tensorflow as tf
from absl import logging

DEFAULT_SIGNATURE = "serving_default"


@dataclasses.dataclass
class ServingInputReceiver:
    receiver_specs: Dict[str, tf.TensorSpec]
    features_fn: Callable = dict
    alternatives: Optional[Dict[str, "ServingInputReceiver"]] = None

    def signatures(self):
        """signature name -> receiver, the default first."""
        return {DEFAULT_SIGNATURE: self, **(self.alternatives or {})}


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn that serves raw feature tensors (a TensorSpec or dict of them).

    model_fn then gets what it is given in training: a dict of tensors for a
    dict, the tensor itself for one TensorSpec, whose signature input is
    named after the spec (default "features").
    """
    single = not isinstance(features, dict)
    single_name = (features.name or "features") if single else None
    specs = {single_name: features} if single else dict(features)
    specs = {name: tf.TensorSpec([default_batch_size] + spec.shape.as_list()[1:], spec.dtype, name=name)
             for name, spec in specs.items()}

    def unwrap_single(received):
        return received[single_name]

    def serving_input_receiver_fn():
        return ServingInputReceiver(specs, unwrap_single if single else dict)

    return serving_input_receiver_fn


def serving_function(receiver, predict_fn):
    """A tf.function taking the receiver's tensors by name and returning predictions."""
    names = sorted(receiver.receiver_specs)
    specs = [tf.TensorSpec(receiver.receiver_specs[n].shape, receiver.receiver_specs[n].dtype, name=n)
             for n in names]

    @tf.function(input_signature=specs)
    def serve(*received):
        return predict_fn(receiver.features_fn(dict(zip(names, received))))

    return serve


def _process_is_gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, under another user
        return False
    return False


def remove_stale_temp_exports(export_dir_base):
    """Removes the temp-<stamp>[-<pid>] folders of exports whose process is
    gone (killed mid-write); a live exporter's folder is left alone."""
    for path in tf.io.gfile.glob(os.path.join(export_dir_base, "temp-*")):
        parts = os.path.basename(path).split("-")
        pid = int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else None
        if pid is None or _process_is_gone(pid):
            logging.info("Removing %s, left by an interrupted export.", path)
            tf.io.gfile.rmtree(path)


def write_saved_model(export_dir_base, module, signatures):
    """Saves under export_dir_base/<timestamp>, via a temp dir and a rename,
    so a failed export never leaves a partial directory under a final name;
    the temp folders of earlier exports that were killed are removed first."""
    tf.io.gfile.makedirs(export_dir_base)
    remove_stale_temp_exports(export_dir_base)
    stamp = int(time.time())
    while tf.io.gfile.exists(os.path.join(export_dir_base, str(stamp))):
        stamp += 1
    final = os.path.join(export_dir_base, str(stamp))
    temp = os.path.join(export_dir_base, f"temp-{stamp}-{os.getpid()}")
    try:
        tf.saved_model.save(module, temp, signatures=signatures)
        tf.io.gfile.rename(temp, final)
    finally:
        if tf.io.gfile.exists(temp):
            tf.io.gfile.rmtree(temp)
    logging.info("SavedModel written to: %s", final)
    return final
