"""TensorBoard scalar summaries without the tensorboard package.

tf.summary.scalar lives in tensorboard, which TensorFlow 2.21 no longer
installs. The scalars are written as tf.estimator wrote them, Summary
protos with `simple_value`, which `tensorboard --logdir=model_dir` reads
and which scripts that read event files with `simple_value` still find.
"""

import tensorflow as tf
from tensorflow.core.framework import summary_pb2


def write_scalars(writer, step, scalars):
    """Writes {tag: number} at `step` to a tf.summary writer and flushes it."""
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=float(value))
                                         for tag, value in scalars.items()])
    _write(writer, step, summary)


def write_text(writer, step, tag, text):
    """Writes one string tensor summary, as tf.estimator named an evaluation's checkpoint_path."""
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
        tag=tag, tensor=tf.make_tensor_proto(text, dtype=tf.string))])
    _write(writer, step, summary)


def _write(writer, step, summary):
    with writer.as_default():
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=step)
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
