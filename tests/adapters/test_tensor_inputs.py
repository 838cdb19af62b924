"""input_fns that return what tf.estimator took besides a (features, labels) dataset: tensors from a one-shot
iterator, transformed after get_next (a label popped and looked up in a table); constants; a features-only
dataset (labels None)."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.adapters import tensor_inputs as tf1_data
from common.tf1 import metrics as tf1_metrics
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(2)
X = RNG.randn(8, 3).astype(np.float32)
NAMES = np.array([b"low", b"high", b"mid", b"high", b"low", b"mid", b"mid", b"high"])
CODES = {b"low": 0.0, b"mid": 1.0, b"high": 2.0}
Y = np.array([[CODES[n]] for n in NAMES], np.float32)
STEPS = 4
LABELS_SEEN = []  # what model_fn was given as labels (params are deep-copied, as tf.estimator copied them)


def linear_fn(features, labels, mode):
    kernel = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], kernel)
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions={"y": predictions})
    LABELS_SEEN.append(labels)
    if labels is None:
        labels = features["y"]
    loss = tf.reduce_mean(tf.square(predictions - labels))
    return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))


def reference(steps=STEPS):
    w = np.zeros((3, 1))
    for _ in range(steps):
        w = w - 0.1 * 2 * X.T.astype(np.float64) @ (X @ w - Y) / len(X)
    return w


def iterator_input_fn():
    """The census sample's shape: tensors from get_next, the label popped out and looked up in a table."""
    dataset = tf.data.Dataset.from_tensors({"x": X, "name": NAMES}).repeat()
    features = tf1_data.make_one_shot_iterator(dataset).get_next()
    names = features.pop("name")
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(list(CODES), list(CODES.values())), -1.0)
    return features, tf.expand_dims(table.lookup(names), 1)


def train(input_fn, model_dir, towers=1):
    est = common.Estimator(linear_fn, str(model_dir),
                           config=common.RunConfig(device_plan=models.plan(towers)))
    est.train(input_fn, steps=STEPS)
    return est


@pytest.mark.parametrize("towers", [1, 2])
def test_tensors_from_an_iterator_are_transformed_per_element_as_in_tf1s_graph(tmp_path, towers):
    est = train(iterator_input_fn, tmp_path, towers)
    np.testing.assert_allclose(est.variable_values()["w"], reference(), rtol=1e-5)


def test_constant_tensors_are_fed_to_every_step(tmp_path):
    est = train(lambda: ({"x": tf.constant(X)}, Y), tmp_path)
    np.testing.assert_allclose(est.variable_values()["w"], reference(), rtol=1e-5)
    np.testing.assert_allclose(
        est.evaluate(lambda: ({"x": X}, Y), steps=2)["loss"],
        np.mean((X @ reference() - Y) ** 2), rtol=1e-5)


def test_a_features_only_dataset_gives_model_fn_labels_none(tmp_path):
    LABELS_SEEN.clear()
    est = train(lambda: tf.data.Dataset.from_tensors({"x": X, "y": Y}).repeat(), tmp_path)
    assert LABELS_SEEN and all(labels is None for labels in LABELS_SEEN)
    np.testing.assert_allclose(est.variable_values()["w"], reference(), rtol=1e-5)


def test_predict_reads_an_iterators_tensors(tmp_path):
    est = train(iterator_input_fn, tmp_path)

    def predict_input_fn():
        return tf1_data.make_one_shot_iterator(tf.data.Dataset.from_tensors({"x": X})).get_next()

    rows = list(est.predict(predict_input_fn))
    np.testing.assert_allclose(np.array([r["y"] for r in rows]), X @ reference(), rtol=1e-5)


def test_what_is_neither_a_dataset_nor_tensors_is_refused_by_name(tmp_path):
    est = common.Estimator(linear_fn, str(tmp_path))
    with pytest.raises(TypeError, match="input_fn for train must return a tf.data.Dataset, or features and labels "
                                        "as tensors; it returned a dict holding object"):
        est.train(lambda: {"x": object()}, steps=1)

    def two_iterators():
        first = tf1_data.make_one_shot_iterator(tf.data.Dataset.from_tensors({"x": X})).get_next()
        return first, tf1_data.make_one_shot_iterator(tf.data.Dataset.from_tensors(Y)).get_next()

    with pytest.raises(ValueError, match="iterators over 2 datasets"):
        est.train(two_iterators, steps=1)
    assert not (tmp_path / "checkpoint").exists()


def test_outside_an_estimator_the_iterator_iterates():
    iterator = tf1_data.make_one_shot_iterator(tf.data.Dataset.range(3))
    assert [int(iterator.get_next()) for _ in range(3)] == [0, 1, 2]


def test_a_tf1_input_fn_over_a_shuffled_dataset_is_read_inside_a_tf_function():
    """A parameter-server worker builds its dataset inside a tf.function (create_per_worker_dataset): the
    input_fn's first call there gives the element's structure, not a TF1 one-shot iterator, which cannot
    capture the shuffle's seed generator (the official CIFAR-10 example's input_fn failed so)."""
    def input_fn():
        dataset = tf.data.Dataset.range(6).shuffle(6, seed=1).batch(3)
        return {"x": tf1_data.make_one_shot_iterator(dataset).get_next() * 10}, tf.constant(0)

    built = tf.function(lambda: tf1_data.dataset_of(input_fn), autograph=False)()
    batches = [features["x"].tolist() for features, _ in built.as_numpy_iterator()]
    assert sorted(sum(batches, [])) == [0, 10, 20, 30, 40, 50] and [len(b) for b in batches] == [3, 3]


def _per_tower_input_fn(stack):
    """The official CIFAR-10 example's input_fn: a batch unstacked and dealt over two towers, each tower's
    examples stacked again, returned as per-tower lists of feature and label tensors."""
    def input_fn():
        rows = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
        dataset = tf.data.Dataset.from_tensor_slices((rows, np.arange(8, dtype=np.int64))).repeat().batch(8)
        images, labels = tf1_data.make_one_shot_iterator(dataset).get_next()
        images, labels = tf.unstack(images, num=8, axis=0), tf.unstack(labels, num=8, axis=0)
        feature_shards, label_shards = [[], []], [[], []]
        for i in range(8):
            feature_shards[i % 2].append(images[i])
            label_shards[i % 2].append(labels[i])
        return [stack(x) for x in feature_shards], [stack(x) for x in label_shards]
    return input_fn


@pytest.mark.parametrize("stack", [tf.parallel_stack, tf.stack], ids=["parallel_stack", "stack"])
def test_per_tower_lists_reach_model_fn_as_lists_of_tensors_on_the_programs_own_towers(tmp_path, stack):
    seen = []

    def model_fn(features, labels, mode):
        seen.append((len(features), len(labels), [tuple(f.shape) for f in features]))
        weight = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
        losses = []
        for i, (tower_x, tower_y) in enumerate(zip(features, labels)):
            with tf.device(f"/cpu:{i}"):  # the program's own towers, as the example placed them on its GPUs
                predicted = tf.matmul(tower_x, weight)[:, 0]
                losses.append(tf.reduce_mean(tf.square(predicted - tf.cast(tower_y, tf.float32))))
        loss = tf.add_n(losses) / len(losses)
        labels_seen = tf.concat(labels, axis=0)  # what the example's metrics read
        return common.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "label_sum": tf1_metrics.mean(tf.reduce_sum(labels_seen))},
            train_op=tf1_train.GradientDescentOptimizer(0.001).minimize(loss))

    est = common.Estimator(model_fn, str(tmp_path))  # one tower here: the program splits the batch itself
    result = est.evaluate(_per_tower_input_fn(stack), steps=2)
    assert seen[0] == (2, 2, [(None, 3), (None, 3)]) or seen[0] == (2, 2, [(4, 3), (4, 3)]), seen[0]
    assert result["label_sum"] == 28  # every example of the batch, once: 0 + 1 + ... + 7
    est.train(_per_tower_input_fn(stack), steps=2)
    assert est.get_variable_value("global_step") == 2


def test_a_program_looking_at_its_input_fn_over_no_files_gets_empty_tensors_of_the_elements_shapes(tmp_path):
    def csv_input_fn(pattern):
        files = tf.compat.v1.matching_files(pattern)
        dataset = tf.data.TextLineDataset(files).map(lambda row: tf.io.decode_csv(row, [[0.0], ["x"]])).batch(4)
        features, label = tf1_data.make_one_shot_iterator(dataset).get_next()
        return {"f": features}, label

    features, label = csv_input_fn(str(tmp_path / "none-*.csv"))  # a TF1 notebook's input_fn(files_name_pattern="")
    assert features["f"].shape == (0,) and features["f"].dtype == tf.float32
    assert label.shape == (0,) and label.dtype == tf.string
    iterator = tf1_data.make_one_shot_iterator(tf.data.Dataset.range(1))
    assert int(iterator.get_next()) == 0
    with pytest.raises(StopIteration):  # a dataset that held something ends as it did
        iterator.get_next()


def test_the_estimator_learns_what_input_fn_returns_without_reading_an_element():
    read = []

    def rows():
        for i in range(6):
            read.append(i)
            yield np.float32([i, i])

    def input_fn():
        dataset = tf.data.Dataset.from_generator(rows, output_signature=tf.TensorSpec([2], tf.float32)).batch(2)
        x = tf1_data.make_one_shot_iterator(dataset).get_next()
        return {"x": x}, tf.reduce_sum(x, axis=1)

    dataset = tf1_data.dataset_of(input_fn)
    assert read == []  # (a shuffle buffer is not filled, nor a file opened, to learn the structure)
    assert [labels.tolist() for _, labels in dataset.as_numpy_iterator()] == [[0, 2], [4, 6], [8, 10]]
    assert read == [0, 1, 2, 3, 4, 5]


def test_an_input_fn_that_cannot_take_an_element_of_no_rows_is_shown_a_real_one():
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(np.arange(8, dtype=np.float32)).batch(4)
        x = tf1_data.make_one_shot_iterator(dataset).get_next()
        tf.debugging.assert_equal(tf.shape(x)[0], 4)  # eagerly: fails on no rows
        return {"x": x}, 2 * x

    dataset = tf1_data.dataset_of(input_fn)
    assert [labels.tolist() for _, labels in dataset.as_numpy_iterator()] == [[0, 2, 4, 6], [8, 10, 12, 14]]


def test_a_list_pair_is_features_and_labels_and_the_source_keeps_the_input_fns_sharding():
    from common.engine import inputs
    from common.spec.model_fn import ModeKeys

    x = np.arange(24, dtype=np.float32).reshape(12, 2)
    listed = inputs.dataset_for(tf1_data.dataset_source(lambda: [tf.constant(x), tf.constant([1, 2, 3])]),
                                ModeKeys.TRAIN, {})
    features, labels = next(iter(listed))
    assert features.shape == x.shape and labels.numpy().tolist() == [1, 2, 3]
    assert tf1_data.dataset_source(lambda input_context: None).shards_itself
    assert not tf1_data.dataset_source(lambda params: None).shards_itself
