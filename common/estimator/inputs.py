"""tf.estimator.inputs: input_fns over numpy arrays and pandas DataFrames.

TF1 fed these through queues: the rows in order over `num_epochs` passes
(from a random row when shuffling), a batch running on across the end of a
pass, shuffled in a queue of `queue_capacity` rows when asked, a smaller
batch only at the very end. A program that calls the input_fn itself
(`features, target = input_fn()`, to look at a batch) gets the first
batch's tensors, as TF1's dequeue gave it; the Estimator gets the Dataset. The input_fns here build that as a tf.data
pipeline in the same order (rotate, repeat, shuffle in a buffer, batch), so
a program reads the same batches as under tf.estimator (with shuffle=False,
row for row). `num_threads` is ignored: one reader keeps the order and the
passes asked for (TF1's several readers could read extra passes).
"""

import random

import numpy as np
import tensorflow as tf

from common.adapters import graph_input

_SHUFFLE_REQUIRED = ("shuffle must be provided and explicitly set as boolean (it is recommended to set it as True "
                     "for training); got {}")


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """An input_fn yielding (features, targets) batches of `x` and `y`, or features alone when y is None.

    x: an array (features is then one tensor) or a dict of arrays; y: an
    array, a dict of arrays (targets is then a dict) or None. num_epochs=None
    repeats forever.
    """
    del num_threads
    if not isinstance(shuffle, bool):
        raise ValueError(_SHUFFLE_REQUIRED.format(shuffle))
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
    elif isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError("x cannot be an empty array")
    else:
        raise TypeError(f"x must be a dict or array; got {type(x).__name__}")
    if isinstance(y, dict):
        if not y:
            raise ValueError("y cannot be empty dict, use None instead.")
        duplicates = set(x) & set(y) if isinstance(x, dict) else set()
        if duplicates:
            raise ValueError(f"{len(duplicates)} duplicate keys are found in both x and y: {duplicates}")
    lengths = {len(v) for v in _arrays(x) + _arrays(y)}
    if len(lengths) != 1:
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y must have the same "
                         f"length.\nShapes in x: {_shapes(x)}\nShapes in y: {_shapes(y)}\n")
    return _input_fn("numpy_input_fn", x, y, lengths.pop(), batch_size, num_epochs, shuffle, queue_capacity)


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1,
                    target_column="target"):
    """An input_fn yielding batches of a DataFrame's columns (a dict) and of `y`: a Series (one tensor) or a
    DataFrame (a dict), its index the same as x's; or the columns alone when y is None.

    queue_capacity=None: the shuffle buffer holds 4 passes over x when
    shuffling, as TF1's queue did. target_column names y inside x's rows
    in TF1 and must not be a column of x.
    """
    del num_threads
    if not isinstance(shuffle, bool):
        raise ValueError(_SHUFFLE_REQUIRED.format(shuffle))
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    if y is not None:
        if target_column in x:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame already has a column "
                             f"with that name: {x.columns}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}\n")
    if queue_capacity is None:
        queue_capacity = 4 * len(x) if shuffle else len(x)
    features = _frame_arrays(x)
    targets = None if y is None else _frame_arrays(y) if hasattr(y, "columns") else y.to_numpy()
    return _input_fn("pandas_input_fn", features, targets, len(x), batch_size, num_epochs, shuffle, queue_capacity)


def _input_fn(maker, features, targets, rows, batch_size, num_epochs, shuffle, queue_capacity):
    """The input_fn `maker` returns, its arguments checked first: TF1's input_fn over no rows, or over 0 epochs,
    trained 0 steps and exited 0 (or failed later with an unnamed error)."""
    if not rows:
        raise ValueError(f"{maker}: the data holds 0 rows; an input_fn over it would give no batch")
    if num_epochs is not None and (isinstance(num_epochs, bool) or not isinstance(num_epochs, int) or num_epochs < 1):
        raise ValueError(f"{maker}(num_epochs={num_epochs!r}) reads no data: give a positive number of passes, or "
                         "None to repeat forever")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"{maker}(batch_size={batch_size!r}): a batch size must be a positive integer")

    def input_fn():
        """The batches as a Dataset when the Estimator calls; called by the program itself, one batch's
        tensors, (features, targets) or features alone, as TF1's dequeue gave them to print or inspect."""
        dataset = _batches()
        return dataset if graph_input.called_by_estimator() else next(iter(dataset))

    def _batches():
        dataset = tf.data.Dataset.from_tensor_slices(features if targets is None else (features, targets))
        if shuffle:  # TF1 started its passes at a random row, so that each call reads on from elsewhere
            start = random.randrange(rows)
            dataset = dataset.skip(start).concatenate(dataset.take(start))
        dataset = dataset.repeat(num_epochs)
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        return dataset.batch(batch_size, drop_remainder=num_epochs is None)  # (endless: every batch is whole)
    return input_fn


def _arrays(value):
    if value is None:
        return []
    return list(value.values()) if isinstance(value, dict) else [value]


def _shapes(value):
    if isinstance(value, dict):
        return {k: v.shape for k, v in value.items()}
    return None if value is None else value.shape


def _frame_arrays(frame):
    """A DataFrame's columns as numpy (text, object or pandas' string dtype, as object arrays: tf.string); a
    text column with other values in it (a missing value's NaN) is refused by name."""
    arrays = {}
    for name in frame.columns:
        values = frame[name].to_numpy()
        if values.dtype == object and not all(isinstance(v, (str, bytes)) for v in values):
            odd = next(v for v in values if not isinstance(v, (str, bytes)))
            raise ValueError(f"pandas_input_fn: column {name!r} holds text and {odd!r} ({type(odd).__name__}); a "
                             f"tensor holds one type: fill the missing values first (frame[{name!r}].fillna(''))")
        arrays[name] = values
    return arrays
