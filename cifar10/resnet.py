"""ResNet v1 for CIFAR-10 (He et al. 2015, section 4.2), as Keras layers.

6n+2 layers: a 3x3 conv, three stages of n basic blocks with 16, 32 and 64
filters (strides 1, 2, 2), global average pooling and a dense layer. The
shortcut of a block that changes size is the official example's "plan A":
average-pool to the new size and zero-pad the channels. Convolutions with
stride 2 pad explicitly (1 pixel each side) before a VALID convolution, as
the official model_base did. Inputs are HWC images in [0, 255]; the model
scales them to x/128 - 1 and transposes to NCHW itself when asked. Batch
norm is the fused kernel (common.fused_batch_norm), as the official
example's fused=True.
"""

import keras
import tensorflow as tf

from common.layers.fused_batch_norm import FusedBatchNormalization

layers = keras.layers
FILTERS = (16, 32, 64)
STRIDES = (1, 2, 2)


def check_num_layers(num_layers):
    if num_layers < 8 or (num_layers - 2) % 6:
        raise ValueError(f"--num_layers={num_layers} must be 6n+2 with n >= 1 (20, 32, 44, 56, 110, ...)")
    return (num_layers - 2) // 6


class ResNetCifar10:
    """Builds the functional model; one instance per configuration."""

    def __init__(self, num_layers, num_classes=10, data_format="channels_last",
                 batch_norm_decay=0.997, batch_norm_epsilon=1e-5, fused_batch_norm=True):
        self.n = check_num_layers(num_layers)
        self.num_classes = num_classes
        self.data_format = data_format
        self.channel_axis = 1 if data_format == "channels_first" else -1
        self.bn_decay = batch_norm_decay
        self.bn_epsilon = batch_norm_epsilon
        self.batch_norm = FusedBatchNormalization if fused_batch_norm else layers.BatchNormalization

    def _conv(self, x, filters, kernel_size, strides, name):
        padding = "same"
        if strides > 1:
            pad = kernel_size - 1
            x = layers.ZeroPadding2D(((pad // 2, pad - pad // 2),) * 2, data_format=self.data_format,
                                     name=name + "_pad")(x)
            padding = "valid"
        return layers.Conv2D(filters, kernel_size, strides, padding=padding, use_bias=False,
                             data_format=self.data_format, name=name)(x)

    def _batch_norm(self, x, name):
        return self.batch_norm(axis=self.channel_axis, momentum=self.bn_decay, epsilon=self.bn_epsilon, name=name)(x)

    def _shortcut(self, x, in_filters, out_filters, stride, name):
        if in_filters == out_filters:
            return x
        x = layers.AveragePooling2D(stride, stride, padding="same", data_format=self.data_format,
                                    name=name + "_pool")(x)
        pad = (out_filters - in_filters) // 2
        paddings = [[0, 0], [pad, pad], [0, 0], [0, 0]] if self.channel_axis == 1 else \
            [[0, 0], [0, 0], [0, 0], [pad, pad]]
        return layers.Lambda(lambda t: tf.pad(t, paddings), name=name + "_zero_pad")(x)

    def _residual(self, x, in_filters, out_filters, stride, name):
        shortcut = self._shortcut(x, in_filters, out_filters, stride, name + "_shortcut")
        x = self._conv(x, out_filters, 3, stride, name + "_conv1")
        x = layers.ReLU(name=name + "_relu1")(self._batch_norm(x, name + "_bn1"))
        x = self._batch_norm(self._conv(x, out_filters, 3, 1, name + "_conv2"), name + "_bn2")
        return layers.ReLU(name=name + "_relu2")(layers.Add(name=name + "_add")([x, shortcut]))

    def build(self):
        images = keras.Input((32, 32, 3), name="image")
        x = layers.Rescaling(1 / 128, offset=-1.0, name="scale")(images)
        if self.channel_axis == 1:
            x = layers.Permute((3, 1, 2), name="to_nchw")(x)
        x = self._conv(x, FILTERS[0], 3, 1, "init_conv")
        x = layers.ReLU(name="init_relu")(self._batch_norm(x, "init_bn"))
        in_filters = FILTERS[0]
        for stage, (filters, stride) in enumerate(zip(FILTERS, STRIDES), start=1):
            for block in range(self.n):
                x = self._residual(x, in_filters, filters, stride if block == 0 else 1,
                                   f"stage{stage}_block{block + 1}")
                in_filters = filters
        x = layers.GlobalAveragePooling2D(data_format=self.data_format, name="global_pool")(x)
        logits = layers.Dense(self.num_classes, name="logits")(x)
        return keras.Model(images, logits, name=f"resnet{6 * self.n + 2}")
