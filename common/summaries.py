"""TensorBoard scalar summaries without the tensorboard package.

tf.summary.scalar lives in tensorboard, which TensorFlow 2.21 no longer
installs; tf.summary.write with the scalar plugin's metadata writes the
same event records, so `tensorboard --logdir=model_dir` reads them.
"""

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import summary_pb2

_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"),
    data_class=summary_pb2.DATA_CLASS_SCALAR,
).SerializeToString()


def write_scalars(writer, step, scalars):
    """Writes {tag: number} at `step` to a tf.summary writer and flushes it."""
    with writer.as_default():
        for tag, value in scalars.items():
            tf.summary.write(tag, tf.constant(np.asarray(value, np.float32)), step=step,
                             metadata=_SCALAR_METADATA)
    writer.flush()


def read_scalars(event_dir):
    """{tag: [(step, value), ...]} from every event file in `event_dir`."""
    found = {}
    for path in sorted(tf.io.gfile.glob(f"{event_dir}/events.out.tfevents.*")):
        for tag, points in read_event_file(path).items():
            found.setdefault(tag, []).extend(points)
    return found


def read_event_file(path):
    """{tag: [(step, value), ...]} of one event file (a string summary's value is bytes)."""
    from tensorflow.core.util import event_pb2

    found = {}
    for record in tf.data.TFRecordDataset(path):
        event = event_pb2.Event.FromString(record.numpy())
        for value in event.summary.value:
            number = tf.make_ndarray(value.tensor).item() if value.HasField("tensor") else value.simple_value
            found.setdefault(value.tag, []).append((event.step, number))
    return found
