"""A TF1-era estimator program in the style of the "custom estimator" tutorial: numeric
feature columns through input_layer, tf.compat.v1.layers.dense, Adagrad, a TF1 accuracy
whose update is summarized in training, a tensor named for a LoggingTensorHook, and a
SessionRunHook that fetches it by name; as tf_upgrade_v2 left it."""

import numpy as np
import tensorflow as tf

tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

KEYS = ("sepal_length", "sepal_width", "petal_length", "petal_width")
BATCH_SIZE = 10
_RNG = np.random.RandomState(11)
HIDDEN_KERNEL = (_RNG.randn(4, 6) * 0.4).astype(np.float32)
LOGITS_KERNEL = (_RNG.randn(6, 3) * 0.4).astype(np.float32)


def flowers(count=60, seed=12):
    rng = np.random.RandomState(seed)
    species = rng.randint(0, 3, count).astype(np.int64)
    centers = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]], np.float32)
    values = centers[species] + rng.randn(count, 4).astype(np.float32) * 0.3
    return {key: values[:, i] for i, key in enumerate(KEYS)}, species


def train_input_fn(batch_size=BATCH_SIZE):
    features, labels = flowers()
    return tf.compat.v1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(batch_size)


def eval_input_fn(batch_size=BATCH_SIZE):
    features, labels = flowers()
    return tf.compat.v1.data.Dataset.from_tensor_slices((features, labels)).batch(batch_size)


def my_model(features, labels, mode, params):
    net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
    net = tf.compat.v1.layers.dense(net, units=6, activation=tf.nn.relu,
                                    kernel_initializer=tf.compat.v1.constant_initializer(HIDDEN_KERNEL))
    logits = tf.compat.v1.layers.dense(net, params["n_classes"], activation=None,
                                       kernel_initializer=tf.compat.v1.constant_initializer(LOGITS_KERNEL))
    predicted_classes = tf.argmax(input=logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"class_ids": predicted_classes[:, tf.newaxis], "probabilities": tf.nn.softmax(logits),
                       "logits": logits}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    tf.nn.softmax(logits, name="softmax_tensor")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    accuracy = tf.compat.v1.metrics.accuracy(labels=labels, predictions=predicted_classes, name="acc_op")
    metrics = {"accuracy": accuracy}
    tf.compat.v1.summary.scalar("accuracy", accuracy[1])
    tf.identity(accuracy[1], name="train_accuracy")
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def feature_columns():
    return [tf.feature_column.numeric_column(key=key) for key in KEYS]


def serving_input_receiver_fn():
    """Serialized tf.Examples, parsed by the columns' spec."""
    spec = tf.compat.v1.feature_column.make_parse_example_spec(feature_columns())
    return tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)()


class ProbabilityRecorder(tf.estimator.SessionRunHook):
    """Keeps the first row of the named softmax and the training accuracy of every run."""

    def __init__(self):
        self.seen = []

    def before_run(self, run_context):
        return tf.estimator.SessionRunArgs(["softmax_tensor:0", "train_accuracy:0"])

    def after_run(self, run_context, run_values):
        probabilities, accuracy = run_values.results
        self.seen.append((probabilities[0].tolist(), float(accuracy)))


def main(model_dir, steps=5, config=None):
    classifier = tf.estimator.Estimator(model_fn=my_model, model_dir=model_dir, config=config,
                                        params={"feature_columns": feature_columns(), "n_classes": 3})
    logging_hook = tf.compat.v1.train.LoggingTensorHook(tensors={"probabilities": "softmax_tensor"}, every_n_iter=2)
    recorder = ProbabilityRecorder()
    classifier.train(input_fn=train_input_fn, steps=steps, hooks=[logging_hook, recorder])
    results = classifier.evaluate(input_fn=eval_input_fn)
    return classifier, recorder.seen, results
