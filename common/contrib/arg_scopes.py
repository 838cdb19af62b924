"""contrib.layers' functions under slim's arg_scope, as TF1 declared them.

TF1 decorated contrib.layers' functions with add_arg_scope, and they were
slim's very functions (`tf.contrib.layers.conv2d is tf.contrib.slim.conv2d`),
so a program set their arguments for a block on either name and both took
them (deeplab-v3 sets `normalizer_fn` on slim.conv2d in resnet_arg_scope and
calls contrib.layers' conv2d inside it). With the tf_slim extra installed
(where arg_scope lives now), this project's contrib functions are decorated
with its add_arg_scope under the key of tf_slim's function of the same name,
so an arg_scope set on either reaches both; without it there is no arg_scope
to use, and they are left as they are.
"""

try:
    from tf_slim.layers import layers as _slim_layers
    from tf_slim.ops.arg_scope import add_arg_scope as _add_arg_scope
except ImportError:  # (no tf_slim: no arg_scope either)
    _slim_layers = None


def add_arg_scope(func):
    """func taking its arguments from slim's arg_scope, keyed as tf_slim's function of its name."""
    if _slim_layers is None:
        return func
    twin = getattr(_slim_layers, func.__name__, None)
    if twin is not None:
        func._key_op = twin._key_op  # (the key tf_slim's arg_scope files a function's arguments under)
    return _add_arg_scope(func)
