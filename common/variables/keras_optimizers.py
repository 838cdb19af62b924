"""Keras optimizers that model_fn makes itself, as TF 2.x estimator code did:

    opt = tf.keras.optimizers.Adam(0.1)
    with tf.GradientTape() as tape: ...
    train_op = opt.apply_gradients(zip(tape.gradient(loss, variables), variables))

tf.estimator ran that update in its graph; here model_fn runs once per
tower, and one tower's update must wait for the others' gradients. The
registry's variable creator sees such an optimizer the moment it makes its
first variable (its name scope names it as the caller) and hands it here:
its apply_gradients, called in a train tower, is recorded
(registry.defer_update) and done once after the towers with the averaged
gradients; called anywhere else, it runs as Keras wrote it.
"""

_DEFERRING = "_common_defers_apply"


def defer_apply(optimizer, deferring, defer_update):
    """Makes `optimizer.apply_gradients` record its update when deferring() says so (once per optimizer):
    defer_update(optimizer, grads_and_vars, apply) records it (registry.defer_update)."""
    if getattr(optimizer, _DEFERRING, False):
        return
    keras_apply = optimizer.apply_gradients

    def apply_gradients(grads_and_vars, *args, **kwargs):
        pairs = list(grads_and_vars)
        if not deferring():
            return keras_apply(pairs, *args, **kwargs)
        return defer_update(optimizer, pairs, lambda averaged: keras_apply(averaged, *args, **kwargs))

    optimizer.apply_gradients = apply_gradients
    setattr(optimizer, _DEFERRING, True)
