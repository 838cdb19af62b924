"""TensorBoard scalar summaries without the tensorboard package.

tf.summary.scalar lives in tensorboard, which TensorFlow 2.21 no longer
installs. The scalars are written as tf.estimator wrote them, Summary
protos with `simple_value`, which `tensorboard --logdir=model_dir` reads
and which scripts that read event files with `simple_value` still find.
"""

import os
import struct
import time

import tensorflow as tf
from google.protobuf import message, struct_pb2
from tensorflow.compat.v1 import logging

HPARAMS_TAG = "_hparams_/session_start_info"  # where TensorBoard's HParams plugin looks


def write_scalars(writer, step, scalars):
    """Writes {tag: number} at `step` to a tf.summary writer and flushes it."""
    summary = tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(tag=tag, simple_value=float(value))
                                         for tag, value in scalars.items()])
    _write(writer, step, summary)


def write_text(writer, step, tag, text):
    """Writes one string tensor summary, as tf.estimator named an evaluation's checkpoint_path."""
    summary = tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(
        tag=tag, tensor=tf.make_tensor_proto(text, dtype=tf.string))])
    _write(writer, step, summary)


def write_serialized(writer, step, serialized, scope=""):
    """Writes a serialized Summary proto (what a TF1 summary op computes) at `step`, its tags without the
    name scope `scope` (a tower's) that TF1's single graph did not have."""
    summary = tf.compat.v1.Summary.FromString(bytes(serialized))
    for value in summary.value:
        if scope and value.tag.startswith(scope + "/"):
            value.tag = value.tag[len(scope) + 1:]
    _write(writer, step, summary)


def _write(writer, step, summary):
    with writer.as_default():
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=step)
    writer.flush()


def written_order(path):
    """The sort key that orders event files as they were written: TensorFlow names them
    events.out.tfevents.<seconds>.<host>.<pid>.<n>.v2, <n> counting the writers of a process, so within one
    second ".11." follows ".9.", which sorting the names as text reverses."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in os.path.basename(path).split(".")]


def read_scalars(event_dir):
    """{tag: [(step, value), ...]} from every event file in `event_dir`."""
    found = {}
    for path in sorted(tf.io.gfile.glob(f"{event_dir}/events.out.tfevents.*"), key=written_order):
        for tag, points in read_event_file(path).items():
            found.setdefault(tag, []).extend(points)
    return found


def metrics_by_step(paths):
    """{global step: {tag: number}} of the numbers in the event files `paths`, by step
    (string summaries, such as an evaluation's checkpoint_path, left out)."""
    by_step = {}
    for path in sorted(paths, key=written_order):
        for tag, points in read_event_file(path).items():
            for step, value in points:
                if isinstance(value, (int, float)):
                    by_step.setdefault(step, {})[tag] = value
    return dict(sorted(by_step.items()))


def read_event_file(path):
    """{tag: [(step, value), ...]} of one event file's scalar summaries (a string summary's value is bytes;
    histograms, images and other many-valued summaries are left out)."""
    found, read = {}, 0
    records = iter(tf.data.TFRecordDataset(path))
    while True:
        try:
            record = next(records)
            event = tf.compat.v1.Event.FromString(record.numpy())
        except StopIteration:
            return found
        except (tf.errors.DataLossError, message.DecodeError) as error:  # cut short, or garbage
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            logging.warning("Event file %s is damaged after its first %d record(s) (%s): using the summaries "
                            "before the damage", path, read, reason)
            return found
        read += 1
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == "tensor":
                array = tf.make_ndarray(value.tensor)
                if array.size == 1:
                    found.setdefault(value.tag, []).append((event.step, array.item()))
            elif kind == "simple_value":
                found.setdefault(value.tag, []).append((event.step, value.simple_value))


def write_hparams(writer, hparams, start_time_secs=None):
    """Records a run's hyperparameters ({name: number, string or bool}) as the
    HParams plugin's session start, so TensorBoard's HParams view lists the
    run with them (the tensorboard package is not a dependency: the plugin's
    HParamsPluginData message is encoded here, field by field)."""
    entries = b""
    for name, value in sorted(hparams.items()):
        if isinstance(value, bool):
            proto = struct_pb2.Value(bool_value=value)
        elif isinstance(value, (int, float)):
            proto = struct_pb2.Value(number_value=float(value))
        else:
            proto = struct_pb2.Value(string_value=str(value))
        entry = _field(1, name.encode()) + _field(2, proto.SerializeToString())
        entries += _field(1, entry)  # map<string, Value> hparams = 1
    start = time.time() if start_time_secs is None else start_time_secs
    session_start_info = entries + _key(5, 1) + struct.pack("<d", start)  # double start_time_secs = 5
    plugin_data = _field(3, session_start_info)  # HParamsPluginData.session_start_info = 3 (version 0)
    metadata = tf.compat.v1.SummaryMetadata(
        plugin_data=tf.compat.v1.SummaryMetadata.PluginData(plugin_name="hparams", content=plugin_data))
    summary = tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(
        tag=HPARAMS_TAG, metadata=metadata, tensor=tf.make_tensor_proto(0.0))])
    _write(writer, 0, summary)


def _varint(number):
    out = b""
    while True:
        low, number = number & 0x7F, number >> 7
        if number:
            out += bytes([low | 0x80])
        else:
            return out + bytes([low])


def _key(field_number, wire_type):
    return _varint(field_number << 3 | wire_type)


def _field(field_number, payload):
    """A length-delimited protobuf field."""
    return _key(field_number, 2) + _varint(len(payload)) + payload
