"""A TF1-era estimator program in the style of the official CIFAR-10 example: a ResNet
builder class (model_base.ResNet's _conv/_batch_norm/_residual_v1 on tf.compat.v1.layers,
name scopes per unit), weight decay over tf.compat.v1.trainable_variables(), TF1 momentum
through a piecewise-constant learning-rate drop, a LoggingTensorHook of tensors in the
spec's training_hooks, TF1 accuracy, and a placeholder serving receiver; as tf_upgrade_v2
left it."""

import numpy as np
import tensorflow as tf

tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

BATCH_SIZE = 8
PARAMS = {"weight_decay": 2e-3, "batch_norm_decay": 0.9, "batch_norm_epsilon": 1e-5,
          "boundaries": [3], "learning_rates": [0.1, 0.01], "momentum": 0.9}


def images(count=64, seed=3):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 2, count).astype(np.int64)
    pictures = rng.rand(count, 8, 8, 3).astype(np.float32) * 0.5
    pictures[labels == 1, 2:6, 2:6, 1] += 1.0
    return pictures, labels


def input_fn(mode, batch_size=BATCH_SIZE):
    pictures, labels = images()
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.compat.v1.data.Dataset.from_tensor_slices(pictures).batch(batch_size)
    dataset = tf.compat.v1.data.Dataset.from_tensor_slices((pictures, labels))
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.repeat()
    return dataset.batch(batch_size)


class ResNet(object):
    """ResNet model builder, as the official example's model_base.ResNet."""

    def __init__(self, is_training, data_format, batch_norm_decay, batch_norm_epsilon):
        self._batch_norm_decay = batch_norm_decay
        self._batch_norm_epsilon = batch_norm_epsilon
        self._is_training = is_training
        assert data_format in ("channels_first", "channels_last")
        self._data_format = data_format
        self._initial = np.random.RandomState(7)  # the same weights on every call, as a seeded graph gave

    def _initializer(self, *shape):
        return tf.compat.v1.constant_initializer((self._initial.randn(*shape) * 0.3).astype(np.float32))

    def forward_pass(self, x):
        raise NotImplementedError("forward_pass() is implemented in ResNet sub classes")

    def _residual_v1(self, x, kernel_size, in_filter, out_filter, stride):
        with tf.compat.v1.name_scope("residual_v1") as name_scope:
            orig_x = x
            x = self._conv(x, kernel_size, out_filter, stride)
            x = self._batch_norm(x)
            x = self._relu(x)
            x = self._conv(x, kernel_size, out_filter, 1)
            x = self._batch_norm(x)
            if in_filter != out_filter:
                orig_x = self._avg_pool(orig_x, stride, stride)
                pad = (out_filter - in_filter) // 2
                orig_x = tf.pad(tensor=orig_x, paddings=[[0, 0], [0, 0], [0, 0], [pad, pad]])
            x = self._relu(tf.add(x, orig_x))
            tf.compat.v1.logging.info("image after unit %s: %s", name_scope, x.get_shape())
            return x

    def _conv(self, x, kernel_size, filters, strides):
        padding = "SAME"
        if strides > 1:
            pad = kernel_size - 1
            pad_beg = pad // 2
            pad_end = pad - pad_beg
            x = tf.pad(tensor=x, paddings=[[0, 0], [pad_beg, pad_end], [pad_beg, pad_end], [0, 0]])
            padding = "VALID"
        return tf.compat.v1.layers.conv2d(
            inputs=x, kernel_size=kernel_size, filters=filters, strides=strides, padding=padding, use_bias=False,
            data_format=self._data_format,
            kernel_initializer=self._initializer(kernel_size, kernel_size, x.get_shape()[-1], filters))

    def _batch_norm(self, x):
        return tf.compat.v1.layers.batch_normalization(
            x, momentum=self._batch_norm_decay, epsilon=self._batch_norm_epsilon, training=self._is_training,
            fused=True)

    def _relu(self, x):
        return tf.nn.relu(x)

    def _fully_connected(self, x, out_dim):
        with tf.compat.v1.name_scope("fully_connected"):
            initializer = self._initializer(x.get_shape()[-1], out_dim)
            return tf.compat.v1.layers.dense(x, out_dim, kernel_initializer=initializer)

    def _avg_pool(self, x, pool_size, stride):
        with tf.compat.v1.name_scope("avg_pool"):
            return tf.compat.v1.layers.average_pooling2d(x, pool_size, stride, "SAME",
                                                         data_format=self._data_format)

    def _global_avg_pool(self, x):
        with tf.compat.v1.name_scope("global_avg_pool"):
            return tf.reduce_mean(input_tensor=x, axis=[1, 2])


class TinyResNet(ResNet):
    """Two stages of one residual unit each, as ResNetCifar10 with n = 1."""

    def __init__(self, is_training, data_format, batch_norm_decay, batch_norm_epsilon):
        super(TinyResNet, self).__init__(is_training, data_format, batch_norm_decay, batch_norm_epsilon)
        self.filters = [4, 4, 8]
        self.strides = [1, 2]

    def forward_pass(self, x):
        x = self._conv(x, 3, self.filters[0], 1)
        x = self._batch_norm(x)
        x = self._relu(x)
        for i in range(2):
            with tf.compat.v1.name_scope("stage"):
                x = self._residual_v1(x, 3, self.filters[i], self.filters[i + 1], self.strides[i])
        x = self._global_avg_pool(x)
        return self._fully_connected(x, 2)


def resnet_model_fn(features, labels, mode, params):
    is_training = mode == tf.estimator.ModeKeys.TRAIN
    model = TinyResNet(is_training, "channels_last", params["batch_norm_decay"], params["batch_norm_epsilon"])
    logits = model.forward_pass(features)
    predictions = {"classes": tf.argmax(input=logits, axis=1), "probabilities": tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions,
                                          export_outputs={"predict": tf.estimator.export.PredictOutput(predictions)})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(logits=logits, labels=labels)
    model_params = tf.compat.v1.trainable_variables()
    loss += params["weight_decay"] * tf.add_n([tf.nn.l2_loss(v) for v in model_params])
    global_step = tf.compat.v1.train.get_global_step()
    boundaries = [np.int64(b) for b in params["boundaries"]]
    learning_rate = tf.compat.v1.train.piecewise_constant(global_step, boundaries, params["learning_rates"])
    optimizer = tf.compat.v1.train.MomentumOptimizer(learning_rate=learning_rate, momentum=params["momentum"])
    update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss, global_step=global_step)
    tensors_to_log = {"learning_rate": learning_rate, "loss": loss}
    logging_hook = tf.compat.v1.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=2)
    metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, predictions["classes"])}
    return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions, loss=loss, train_op=train_op,
                                      training_hooks=[logging_hook], eval_metric_ops=metrics)


def serving_input_receiver_fn():
    images_in = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 3], name="images")
    return tf.estimator.export.TensorServingInputReceiver(images_in, {"images": images_in})


def main(model_dir, steps=6, config=None):
    classifier = tf.estimator.Estimator(model_fn=resnet_model_fn, model_dir=model_dir, params=PARAMS,
                                        config=config or tf.estimator.RunConfig(save_checkpoints_steps=3))
    classifier.train(input_fn=lambda: input_fn(tf.estimator.ModeKeys.TRAIN), steps=steps)
    results = classifier.evaluate(input_fn=lambda: input_fn(tf.estimator.ModeKeys.EVAL))
    export_dir = classifier.export_saved_model(model_dir + "/export", serving_input_receiver_fn)
    return classifier, results, export_dir
