"""contrib.layers' functions under slim's arg_scope, as TF1 declared them.

TF1 decorated contrib.layers' functions with add_arg_scope, so a program
set their arguments for a block (`with arg_scope([layers.batch_norm],
is_training=...)`: deeplab-v3). With the tf_slim extra installed (where
arg_scope lives now) this project's are decorated with its add_arg_scope;
without it there is no arg_scope to use, and they are left as they are.
"""

try:
    from tf_slim.ops.arg_scope import add_arg_scope
except ImportError:  # (no tf_slim: no arg_scope either)
    def add_arg_scope(func):
        return func
