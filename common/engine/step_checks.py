"""The checks a train step makes while it is traced or as it runs: a loss that trains nothing, a gradient
that is not finite, a tensor a hook names that model_fn's graph does not hold."""

import tensorflow as tf


def refuse_a_loss_without_gradients(tower, variables):
    """Raises, while the step is traced (before any step runs), when the spec's optimizer gets no gradient for
    any variable: the loss does not depend on them, and training would only count steps (tf.estimator raised;
    optimizers model_fn applies itself, TF1's and Keras's, refuse that themselves)."""
    names = [t.name for t in variables.trainable]
    if variables.optimizer is not None and names and all(g is None for g in tower.grads):
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise ValueError(f"No gradients provided for any variable: model_fn's loss depends on none of the "
                         f"{len(names)} variables it trains ({shown}); nothing would train. Compute the loss "
                         "from the model's outputs (not from labels or constants alone, nor through "
                         "tf.stop_gradient or numpy).")


def nan_unless_finite(loss, grads, device):
    """The loss, or NaN when a gradient is not finite.

    oneDNN's fused MatMul/Conv + BiasAdd + ReLU turns NaN into 0, so a batch
    holding NaN can leave the loss finite while NaN gradients reach the
    weights; reporting NaN lets the loop stop at that step, the NaN hook name
    it and the checkpoint saver keep the last finite state.
    """
    finite = all_finite(grads, device)
    if finite is None:
        return loss
    with tf.device(device):
        return nan_unless(finite, loss)


def all_finite(grads, device):
    """Whether every value of every gradient (None: none; an IndexedSlices: its values) is finite, each
    checked on its own device and the answers joined on `device`; None when there is no gradient."""
    checks = []
    for grad in grads:
        if grad is not None:
            values = grad.values if isinstance(grad, tf.IndexedSlices) else grad
            with tf.device(values.device):
                checks.append(tf.reduce_all(tf.math.is_finite(values)))
    if not checks:
        return None
    with tf.device(device):
        return tf.reduce_all(tf.stack(checks))


def nan_unless(finite, loss):
    """The loss where `finite` holds, else NaN."""
    return tf.where(finite, loss, tf.constant(float("nan"), loss.dtype))


def graph_tensors(names, scope):
    """The tensors model_fn named `names` (tf.identity(t, name=...)), found
    under the tower's name scope `scope` in the graph being traced."""
    graph = tf.compat.v1.get_default_graph()
    found = {}
    for name in names:
        full = f"{scope}/{name}" if scope else name
        try:
            found[name] = graph.get_tensor_by_name(full if ":" in name else f"{full}:0")
        except (KeyError, ValueError) as error:
            raise ValueError(f"a hook asks for the tensor {name!r}, which model_fn's graph does not "
                             f"hold ({error})") from None
    return found
