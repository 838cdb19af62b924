"""Small model_fns and data shared by the framework tests."""

import keras
import numpy as np
import tensorflow as tf

import common
from common.devices.plan import DevicePlan
from common.spec import metrics


def blobs(num_examples, dim=4, classes=3, seed=0):
    """Separable Gaussian blobs: features float32 [n, dim], labels int64 [n]."""
    rng = np.random.RandomState(seed)
    centers = rng.randn(classes, dim).astype(np.float32) * 3
    labels = rng.randint(0, classes, num_examples).astype(np.int64)
    features = centers[labels] + rng.randn(num_examples, dim).astype(np.float32)
    return features, labels


class SharedLog(list):
    """A list a test hands model_fn in params to see what it was called with: the Estimator deep-copies its
    params, as tf.estimator did, and this list stays the test's own."""

    def __deepcopy__(self, memo):
        return self


def classifier_fn(features, labels, mode, params):
    """Dense classifier; params choose hidden units, batch norm, dropout, optimizer,
    and a learning_rate_schedule of the global step.

    params["trace_log"], when given (a SharedLog), collects (mode, loss device) per traced call.
    """
    def build():
        layers = []
        if params.get("hidden"):
            layers.append(keras.layers.Dense(params["hidden"], activation="relu", name="hidden"))
        if params.get("batch_norm"):
            layers.append(keras.layers.BatchNormalization(name="bn"))
        if params.get("dropout"):
            layers.append(keras.layers.Dropout(params["dropout"]))
        layers.append(keras.layers.Dense(params.get("classes", 3), name="logits"))
        return keras.Sequential(layers, name="classifier")

    net = common.get_module("net", build)
    x = features["x"] if isinstance(features, dict) else features
    logits = net(x, training=mode == common.ModeKeys.TRAIN)
    predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if "trace_log" in params:
        params["trace_log"].append((mode, loss.device))
    optimizer = common.get_optimizer(lambda: keras.optimizers.SGD(
        params.get("learning_rate", 0.1), momentum=params.get("momentum", 0.9)))
    schedule = params.get("learning_rate_schedule")
    return common.EstimatorSpec(
        mode, predictions=predictions, loss=loss, optimizer=optimizer,
        learning_rate=schedule(common.get_global_step()) if schedule else None,
        eval_metric_ops={"accuracy": metrics.accuracy(labels, predictions["classes"])},
        scalars={"batch_accuracy": tf.reduce_mean(
            tf.cast(tf.equal(predictions["classes"], labels), tf.float32))})


def scored_fn(peak_step):
    """classifier_fn with an eval metric "score" = -(global step - peak_step)^2: it rises to 0 at
    peak_step, then falls, as a validation metric does when a model starts to overfit."""
    def model_fn(features, labels, mode, params):
        spec = classifier_fn(features, labels, mode, params)
        if mode != common.ModeKeys.EVAL:
            return spec
        step = tf.cast(common.get_global_step(), tf.float32)
        score = tf.fill(tf.shape(labels), -tf.square(step - peak_step))
        return spec._replace(eval_metric_ops={**spec.eval_metric_ops, "score": metrics.mean(score)})
    return model_fn


def counting_variables(model_fn):
    """(model_fn wrapped, the set of ids of the variables its calls were given):
    a model whose variables are created once keeps the set's size."""
    created = set()

    def counting_creator(next_creator, **kwargs):
        variable = next_creator(**kwargs)
        created.add(id(variable))
        return variable

    def counted_fn(features, labels, mode, params):
        with tf.variable_creator_scope(counting_creator):
            return model_fn(features, labels, mode, params)

    return counted_fn, created


def train_input(features, labels, batch_size, repeat=True, shuffle_seed=None):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((features, labels))
        if shuffle_seed is not None:
            dataset = dataset.shuffle(len(labels), seed=shuffle_seed)
        if repeat:
            dataset = dataset.repeat()
        return dataset.batch(batch_size, drop_remainder=True)
    return input_fn


def eval_input(features, labels, batch_size):
    return lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch_size)


def linear_adam(x, y, steps, learning_rate=0.1):
    """numpy: full-batch Adam (Keras's, epsilon 1e-7) on the linear regression of y on x from zero weights."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    w, m, v = np.zeros((x.shape[1], 1)), np.zeros((x.shape[1], 1)), np.zeros((x.shape[1], 1))
    for t in range(1, steps + 1):
        g = 2 * x.T @ (x @ w - y) / len(x)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        corrected = learning_rate * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        w -= corrected * m / (np.sqrt(v) + 1e-7)
    return w


def plan(num_towers, variable_strategy="CPU"):
    return DevicePlan(tuple(f"/cpu:{i}" for i in range(num_towers)), variable_strategy)


def one_batch(features, labels, batch_size=32):
    """input_fn: the first batch_size examples, the same batch at every step."""
    x, y = features[:batch_size], labels[:batch_size]
    return lambda: tf.data.Dataset.from_tensors((x, y)).repeat()


def tower_estimator(model_dir, num_towers, strategy="CPU", **params):
    """classifier_fn (8 hidden units unless params say) on num_towers logical CPUs, seeded."""
    params.setdefault("hidden", 8)
    return common.Estimator(classifier_fn, str(model_dir), params=params,
                            config=common.RunConfig(tf_random_seed=5, device_plan=plan(num_towers, strategy)))


def evaluate_predict_export(est, features, labels, export_dir_base):
    """Runs every mode but TRAIN on a 4-feature classifier: evaluate, predict 4 examples, export."""
    est.evaluate(eval_input(features, labels, 64))
    list(est.predict(eval_input(features[:4], labels[:4], 4)))
    est.export_saved_model(str(export_dir_base), common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 4])))
