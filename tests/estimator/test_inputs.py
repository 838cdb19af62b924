"""tf.estimator.inputs' numpy_input_fn and pandas_input_fn: the batches TF 2.15's queues gave, read through the
project's tf.data pipeline, and TF 2.15's errors."""

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

from common import Estimator, EstimatorSpec
from common.adapters import tensor_inputs as tf1_data
from common.canned import LinearRegressor
from common.estimator import inputs
from common.tf1.train import GradientDescentOptimizer


def _dataset(input_fn):
    """The Dataset the Estimator reads from input_fn (called by the program itself, it gives one batch)."""
    return tf1_data.dataset_of(input_fn)


def _batches(input_fn):
    return [tf.nest.map_structure(lambda t: t.numpy().tolist(), batch) for batch in _dataset(input_fn)]


X = {"a": np.arange(5.0), "b": np.arange(10, 15)}
Y = np.arange(100, 105)


def test_batches_run_on_across_passes_and_only_the_last_is_short_as_tf215_gave_them():
    # TF 2.15 (MonitoredSession over tf.compat.v1.estimator.inputs.numpy_input_fn, same arguments)
    assert _batches(inputs.numpy_input_fn(X, Y, batch_size=2, num_epochs=2, shuffle=False)) == [
        ({"a": [0.0, 1.0], "b": [10, 11]}, [100, 101]), ({"a": [2.0, 3.0], "b": [12, 13]}, [102, 103]),
        ({"a": [4.0, 0.0], "b": [14, 10]}, [104, 100]), ({"a": [1.0, 2.0], "b": [11, 12]}, [101, 102]),
        ({"a": [3.0, 4.0], "b": [13, 14]}, [103, 104])]
    assert _batches(inputs.numpy_input_fn(X, {"t": Y}, batch_size=3, shuffle=False)) == [
        ({"a": [0.0, 1.0, 2.0], "b": [10, 11, 12]}, {"t": [100, 101, 102]}),
        ({"a": [3.0, 4.0], "b": [13, 14]}, {"t": [103, 104]})]
    forever = _dataset(inputs.numpy_input_fn(np.arange(5), batch_size=2, num_epochs=None, shuffle=False))
    assert forever.element_spec.shape == [2]  # static, as TF1's dequeue_many gave it
    assert [batch.numpy().tolist() for batch in forever.take(4)] == [[0, 1], [2, 3], [4, 0], [1, 2]]


def test_shuffled_passes_read_every_row_once_per_pass_in_another_order_from_another_start():
    rows = np.arange(50)
    input_fn = inputs.numpy_input_fn(rows, rows * 2, batch_size=7, num_epochs=3, shuffle=True, queue_capacity=20)
    batches = _batches(input_fn)
    features = np.concatenate([f for f, _ in batches])
    assert [len(f) for f, _ in batches] == [7] * 21 + [3]
    assert np.array_equal(np.concatenate([t for _, t in batches]), features * 2)  # rows stay whole
    assert np.array_equal(np.sort(features), np.repeat(rows, 3))
    assert not np.array_equal(features[:50], rows)
    first_rows = {_batches(input_fn)[0][0][0] for _ in range(8)}
    assert len(first_rows) > 1  # each call starts elsewhere (TF1's random start), not always at row 0


def test_a_dataframe_feeds_its_columns_text_included_and_a_series_or_frame_target():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "s": ["x", "y", "z"]}, index=[5, 6, 7])
    series = pd.Series([0, 1, 0], index=[5, 6, 7])
    # TF 2.15 (its pandas_io, the text column as object dtype: it cannot read pandas' string dtype)
    assert _batches(inputs.pandas_input_fn(frame, series, batch_size=2, shuffle=False)) == [
        ({"a": [1.0, 2.0], "s": [b"x", b"y"]}, [0, 1]), ({"a": [3.0], "s": [b"z"]}, [0])]
    targets = pd.DataFrame({"u": [0, 1, 0], "v": [1.0, 2.0, 3.0]}, index=[5, 6, 7])
    assert _batches(inputs.pandas_input_fn(frame, targets, batch_size=3, shuffle=False)) == [
        ({"a": [1.0, 2.0, 3.0], "s": [b"x", b"y", b"z"]}, {"u": [0, 1, 0], "v": [1.0, 2.0, 3.0]})]
    assert _batches(inputs.pandas_input_fn(frame, batch_size=3, shuffle=False)) == [
        {"a": [1.0, 2.0, 3.0], "s": [b"x", b"y", b"z"]}]


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(x=X, y=Y), ValueError, "shuffle must be provided and explicitly set as boolean .*got None"),
    (dict(x={}, shuffle=False), ValueError, "x cannot be an empty dict"),
    (dict(x=[1, 2], shuffle=False), TypeError, "x must be a dict or array; got list"),
    (dict(x={"a": np.arange(3)}, y=np.arange(4), shuffle=False), ValueError,
     r"Length of tensors in x and y is mismatched.*\nShapes in x: \{'a': \(3,\)\}\nShapes in y: \(4,\)"),
    (dict(x={"a": np.arange(3)}, y={"a": np.arange(3)}, shuffle=False), ValueError,
     "1 duplicate keys are found in both x and y: {'a'}"),
])
def test_numpy_input_fn_refuses_what_tf215_refused_with_its_words(kwargs, error, message):
    with pytest.raises(error, match=message):
        inputs.numpy_input_fn(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_epochs=0), r"numpy_input_fn\(num_epochs=0\) reads no data: give a positive number of passes"),
    (dict(num_epochs=-1), r"numpy_input_fn\(num_epochs=-1\) reads no data"),
    (dict(batch_size=0), r"numpy_input_fn\(batch_size=0\): a batch size must be a positive integer"),
    (dict(x={"a": np.zeros((0, 2))}, y=np.zeros(0)), "numpy_input_fn: the data holds 0 rows"),
])
def test_input_fns_that_would_give_no_batch_are_refused_when_made(kwargs, message):
    """tf.estimator 2.15 trained 0 steps and exited 0 on num_epochs=0; 0-row arrays failed at the first call
    ("empty range for randrange()")."""
    with pytest.raises(ValueError, match=message):
        inputs.numpy_input_fn(**{"x": X, "y": Y, "shuffle": True, **kwargs})
    with pytest.raises(ValueError, match="pandas_input_fn: the data holds 0 rows"):
        inputs.pandas_input_fn(pd.DataFrame({"a": []}), shuffle=True)


def test_pandas_input_fn_refuses_a_target_named_as_a_column_and_another_index():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0]}, index=[5, 6, 7])
    with pytest.raises(ValueError, match="Index for x and y are mismatched"):
        inputs.pandas_input_fn(frame, pd.Series([0, 1, 0]), shuffle=False)
    with pytest.raises(ValueError, match="Cannot use name a for target column"):
        inputs.pandas_input_fn(frame, pd.Series([0, 1, 0], index=[5, 6, 7]), shuffle=False, target_column="a")
    with pytest.raises(ValueError, match=r"column 'city' holds text and nan \(float\); .*fillna"):
        inputs.pandas_input_fn(pd.DataFrame({"city": ["Oslo", None, "Lima"]}, dtype=object).fillna(np.nan),
                               shuffle=False)


def test_a_premade_estimator_trains_on_numpy_input_fn_as_on_the_same_batches_from_tf_data(tmp_path):
    rng = np.random.RandomState(0)
    x, y = rng.randn(12, 3).astype(np.float32), rng.randn(12).astype(np.float32)
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    numpy_fn = inputs.numpy_input_fn({"x": x}, y, batch_size=4, num_epochs=None, shuffle=False)

    def data_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)

    weights = []
    for name, input_fn in (("numpy", numpy_fn), ("data", data_fn)):
        regressor = LinearRegressor(columns, model_dir=str(tmp_path / name))
        regressor.train(input_fn, steps=5)
        weights.append(regressor.get_variable_value("linear/linear_model/x/weights"))
    assert np.abs(weights[0]).sum() > 0
    np.testing.assert_array_equal(weights[0], weights[1])


def test_an_input_fn_the_program_calls_itself_gives_one_batchs_tensors_and_still_feeds_the_estimator(tmp_path):
    frame = pd.DataFrame({"x": np.arange(6, dtype=np.float32), "word": list("abcdef")})
    input_fn = inputs.pandas_input_fn(frame, pd.Series(np.arange(6) * 10.0), batch_size=4,
                                                      shuffle=False)
    features, target = input_fn()  # as TF1 programs looked at a batch
    assert features["x"].numpy().tolist() == [0, 1, 2, 3] and features["word"].numpy().tolist() == [b"a", b"b",
                                                                                                  b"c", b"d"]
    assert target.numpy().tolist() == [0.0, 10.0, 20.0, 30.0]
    only_x = inputs.numpy_input_fn({"x": np.arange(3.0)}, batch_size=2, shuffle=False)()
    assert only_x["x"].numpy().tolist() == [0.0, 1.0]

    def model_fn(features, labels, mode):
        weight = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features["x"] * weight - tf.cast(labels, tf.float32)))
        return EstimatorSpec(mode, loss=loss,
                                    train_op=GradientDescentOptimizer(1e-3).minimize(loss))

    est = Estimator(model_fn, str(tmp_path))
    est.train(input_fn)  # the same function hands the Estimator its batches: 6 rows, one epoch, 2 steps
    assert est.get_variable_value("global_step") == 2
