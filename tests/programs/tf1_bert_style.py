"""A TF1 program in google-research/bert's style, as tf_upgrade_v2 left such code: `import
tensorflow.compat.v1 as tf`, get_variable under nested variable_scope(default_name="bert"),
tf.layers.dense, its own tf.train.Optimizer subclass (Adam with decoupled weight decay, slots made by
get_variable in apply_gradients, global step counted by hand) on tf.gradients clipped by global norm, and
`init_from_checkpoint` of a pretrained checkpoint's "bert/" variables (its normal use). `pretrain` writes
that checkpoint; `fine_tune` starts from it."""

import numpy as np
import tensorflow.compat.v1 as tf

VOCAB, WIDTH, LENGTH, BATCH = 12, 4, 3, 8
_RNG = np.random.RandomState(3)
INITIAL = {"word_embeddings": _RNG.randn(VOCAB, WIDTH) * 0.5, "layer_0": _RNG.randn(WIDTH, WIDTH) * 0.5,
           "layer_1": _RNG.randn(WIDTH, WIDTH) * 0.5, "output_weights": _RNG.randn(2, WIDTH) * 0.5}


def examples(seed):
    rng = np.random.RandomState(seed)
    ids = rng.randint(0, VOCAB, (32, LENGTH)).astype(np.int32)
    labels = (ids[:, 0] > VOCAB // 2).astype(np.int32)
    return ids, labels


def input_fn(seed, repeat):
    def make(params):
        ids, labels = examples(seed)
        data = tf.data.Dataset.from_tensor_slices({"input_ids": ids, "label_ids": labels})
        return (data.repeat() if repeat else data).batch(params["batch_size"])
    return make


class AdamWeightDecay(tf.train.Optimizer):
    """Adam without bias correction, weight decay added to the update, as BERT's optimizer had it."""

    def __init__(self, learning_rate, weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6):
        super().__init__(False, "AdamWeightDecay")
        self.learning_rate, self.weight_decay_rate = learning_rate, weight_decay_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            if grad is None:
                continue
            param_name = param.name.split(":")[0]
            m = tf.get_variable(param_name + "/adam_m", shape=param.shape.as_list(), dtype=tf.float32,
                                trainable=False, initializer=tf.zeros_initializer())
            v = tf.get_variable(param_name + "/adam_v", shape=param.shape.as_list(), dtype=tf.float32,
                                trainable=False, initializer=tf.zeros_initializer())
            next_m = self.beta_1 * m + (1.0 - self.beta_1) * grad
            next_v = self.beta_2 * v + (1.0 - self.beta_2) * tf.square(grad)
            update = next_m / (tf.sqrt(next_v) + self.epsilon)
            if "bias" not in param_name:
                update += self.weight_decay_rate * param
            assignments.extend([param.assign(param - self.learning_rate * update), m.assign(next_m),
                                v.assign(next_v)])
        return tf.group(*assignments, name=name)


def encoder(input_ids):
    with tf.variable_scope(None, default_name="bert"):
        with tf.variable_scope("embeddings"):
            table = tf.get_variable("word_embeddings", [VOCAB, WIDTH],
                                    initializer=tf.constant_initializer(INITIAL["word_embeddings"]))
        one_hot = tf.one_hot(tf.reshape(input_ids, [-1]), depth=VOCAB)  # BERT's use_one_hot_embeddings
        embedded = tf.reduce_mean(tf.reshape(tf.matmul(one_hot, table), [-1, LENGTH, WIDTH]), axis=1)
        with tf.variable_scope("encoder"):
            for index in range(2):
                with tf.variable_scope("layer_%d" % index):
                    embedded = tf.layers.dense(embedded, WIDTH, activation=tf.tanh, name="dense",
                                               kernel_initializer=tf.constant_initializer(
                                                   INITIAL["layer_%d" % index]))
        return embedded


def model_fn_builder(init_checkpoint):
    def model_fn(features, labels, mode, params):
        pooled = encoder(features["input_ids"])
        output_weights = tf.get_variable("output_weights", [2, WIDTH],
                                         initializer=tf.constant_initializer(INITIAL["output_weights"]))
        output_bias = tf.get_variable("output_bias", [2], initializer=tf.zeros_initializer())
        logits = tf.nn.bias_add(tf.matmul(pooled, output_weights, transpose_b=True), output_bias)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=features["label_ids"],
                                                                             logits=logits))
        if init_checkpoint:
            tvars = tf.trainable_variables()
            assignment = {v.name.split(":")[0]: v.name.split(":")[0] for v in tvars if v.name.startswith("bert/")}
            tf.train.init_from_checkpoint(init_checkpoint, assignment)
        if mode == tf.estimator.ModeKeys.TRAIN:
            global_step = tf.train.get_or_create_global_step()
            tvars = tf.trainable_variables()
            grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tvars), clip_norm=1.0)
            train_op = AdamWeightDecay(0.05).apply_gradients(zip(grads, tvars), global_step=global_step)
            train_op = tf.group(train_op, [global_step.assign(global_step + 1)])
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        accuracy = tf.metrics.accuracy(features["label_ids"], tf.argmax(logits, axis=-1, output_type=tf.int32))
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"eval_accuracy": accuracy})
    return model_fn


def _estimator(model_dir, init_checkpoint=None):
    return tf.estimator.Estimator(model_fn_builder(init_checkpoint), model_dir=model_dir, params={"batch_size": BATCH})


def pretrain(model_dir):
    """3 steps from the seeded initial weights; returns the estimator (its model.ckpt-3 is the pretrained one)."""
    estimator = _estimator(model_dir)
    estimator.train(input_fn(0, True), max_steps=3)
    return estimator


def fine_tune(model_dir, init_checkpoint):
    """3 steps on other data from the pretrained "bert/" weights; returns (estimator, eval metrics)."""
    estimator = _estimator(model_dir, init_checkpoint)
    estimator.train(input_fn(1, True), max_steps=3)
    return estimator, estimator.evaluate(input_fn(1, False))
