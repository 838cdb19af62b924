"""Dogs vs. cats model_fn: a small CNN, or a keras.applications backbone under a new head.

Small CNN: three blocks of (Conv 5x5 stride 2 relu, max-pool 2, dropout
0.3), Dense 1024 relu, dropout 0.5, one logit. Backbone: vgg16, resnet50,
mobilenet_v2 or inception_v3 without its top, global average pooling, the
same head; weights from an .h5 file (nothing is downloaded), frozen unless
fine_tune; each backbone gets its own input preprocessing.

params: image_size, learning_rate, backbone ("" for the small CNN),
backbone_weights, fine_tune, data_format.
"""

import keras
import tensorflow as tf
from absl import logging

import common
from common.spec import metrics

BLOCK_FILTERS = (32, 64, 128)
BACKBONES = {
    "vgg16": (keras.applications.VGG16, keras.applications.vgg16.preprocess_input),
    "resnet50": (keras.applications.ResNet50, keras.applications.resnet50.preprocess_input),
    "mobilenet_v2": (keras.applications.MobileNetV2, keras.applications.mobilenet_v2.preprocess_input),
    "inception_v3": (keras.applications.InceptionV3, keras.applications.inception_v3.preprocess_input),
}

MIN_IMAGE_SIZE = {"inception_v3": 75}  # keras.applications' smallest input; the others take 32


def check_backbone(name, image_size, weights_path=None):
    """ValueError naming the problem when `name` cannot take image_size, or
    weights_path is not an HDF5 weights file of that backbone without its top."""
    smallest = MIN_IMAGE_SIZE.get(name, 32)
    if image_size < smallest:
        raise ValueError(f"--image_size={image_size} is below the {smallest} pixels --backbone={name} takes")
    if weights_path:
        constructor, _ = BACKBONES[name]
        backbone = constructor(include_top=False, weights=None, input_shape=(image_size, image_size, 3), pooling="avg")
        try:
            backbone.load_weights(weights_path)
        except Exception as error:  # Keras and h5py raise many types for a wrong file
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ValueError(
                f"--backbone_weights={weights_path} is not an HDF5 weights file of {name} without its top "
                f"(include_top=False), as keras.applications saves it: {first_line}") from error


def _head(x):
    layers = keras.layers
    x = layers.Dense(1024, activation="relu", name="head_dense")(x)
    x = layers.Dropout(0.5, name="head_dropout")(x)
    return layers.Dense(1, name="logit")(x)


def build_small_cnn(image_size, data_format="channels_last"):
    layers = keras.layers
    images = keras.Input((image_size, image_size, 3), name="image")
    x = layers.Permute((3, 1, 2))(images) if data_format == "channels_first" else images
    for block, filters in enumerate(BLOCK_FILTERS, start=1):
        x = layers.Conv2D(filters, 5, strides=2, padding="same", activation="relu", data_format=data_format,
                          name=f"block{block}_conv")(x)
        x = layers.MaxPooling2D(2, padding="same", data_format=data_format, name=f"block{block}_pool")(x)
        x = layers.Dropout(0.3, name=f"block{block}_dropout")(x)
    x = layers.Flatten(data_format=data_format, name="flatten")(x)
    return keras.Model(images, _head(x), name="small_cnn")


def build_backbone_model(name, image_size, weights_path=None, fine_tune=False):
    """keras.applications `name` (no top) under the dense head; images in [0, 1]."""
    if name not in BACKBONES:
        raise ValueError(f"--backbone={name!r} is not one of {', '.join(sorted(BACKBONES))}")
    constructor, preprocess = BACKBONES[name]
    backbone = constructor(include_top=False, weights=None, input_shape=(image_size, image_size, 3),
                           pooling="avg")
    if weights_path:
        backbone.load_weights(weights_path)
        logging.info("Backbone %s: weights from %s", name, weights_path)
    else:
        logging.warning("Backbone %s: no --backbone_weights given, starting from random weights", name)
    backbone.trainable = fine_tune
    images = keras.Input((image_size, image_size, 3), name="image")
    inputs = preprocess(images * 255.0)
    # A frozen backbone keeps its batch norm in inference mode while the head trains.
    features = backbone(inputs) if fine_tune else backbone(inputs, training=False)
    return keras.Model(images, _head(features), name=f"{name}_classifier")


def build(params):
    if params.get("backbone"):
        return build_backbone_model(params["backbone"], params["image_size"], params.get("backbone_weights"),
                                    params.get("fine_tune", False))
    return build_small_cnn(params["image_size"], params.get("data_format", "channels_last"))


def model_fn(features, labels, mode, params):
    images = features["image"] if isinstance(features, dict) else features
    net = common.get_module("classifier", lambda: build(params))
    logit = tf.cast(tf.squeeze(net(images, training=mode == common.ModeKeys.TRAIN), axis=1), tf.float32)
    probabilities = tf.sigmoid(logit)
    predictions = {"probabilities": probabilities, "classes": tf.cast(probabilities > 0.5, tf.int32)}
    if isinstance(features, dict) and "key" in features:
        predictions["key"] = features["key"]  # passed through, to match predictions to files
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions=predictions)
    labels = tf.cast(labels, tf.float32)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logit))
    optimizer = common.get_optimizer(lambda: keras.optimizers.Adam(
        params["learning_rate"], global_clipnorm=params.get("clip_global_norm")))
    return common.EstimatorSpec(
        mode, predictions=predictions, loss=loss, optimizer=optimizer,
        eval_metric_ops={"accuracy": metrics.accuracy(labels, predictions["classes"]),
                         "log_loss": metrics.binary_log_loss(labels, probabilities)})
