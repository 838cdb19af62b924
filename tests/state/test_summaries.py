"""Event files as tf.estimator wrote them: simple_value scalars, a string tensor, and the HParams
plugin's session start (decoded here with its message types rebuilt from tensorboard's plugin_data.proto)."""

import os

import numpy as np
import pytest
import tensorflow as tf
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2
from tensorflow.core.util import event_pb2

from common.state import summaries


def _plugin_data_class():
    """tensorboard.hparams.HParamsPluginData (session_start_info only), from the .proto's field numbers."""
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(struct_pb2.DESCRIPTOR.serialized_pb)
    proto = descriptor_pb2.FileDescriptorProto(name="plugin_data.proto", package="tensorboard.hparams",
                                               syntax="proto3", dependency=["google/protobuf/struct.proto"])
    start = proto.message_type.add(name="SessionStartInfo")
    entry = start.nested_type.add(name="HparamsEntry", options=descriptor_pb2.MessageOptions(map_entry=True))
    entry.field.add(name="key", number=1, type=9, label=1)
    entry.field.add(name="value", number=2, type=11, label=1, type_name=".google.protobuf.Value")
    start.field.add(name="hparams", number=1, type=11, label=3,
                    type_name=".tensorboard.hparams.SessionStartInfo.HparamsEntry")
    start.field.add(name="start_time_secs", number=5, type=1, label=1)
    data = proto.message_type.add(name="HParamsPluginData")
    data.field.add(name="version", number=1, type=5, label=1)
    data.field.add(name="session_start_info", number=3, type=11, label=1,
                   type_name=".tensorboard.hparams.SessionStartInfo")
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorboard.hparams.HParamsPluginData"))


def _values(event_dir):
    found = []
    for path in tf.io.gfile.glob(f"{event_dir}/events.out.tfevents.*"):
        for record in tf.data.TFRecordDataset(path):
            found += [(event_pb2.Event.FromString(record.numpy()).step, v)
                      for v in event_pb2.Event.FromString(record.numpy()).summary.value]
    return found


def test_hparams_are_the_plugins_session_start_and_scalars_are_simple_values(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    summaries.write_hparams(writer, {"learning_rate": 0.003, "optimizer": "adam", "train_steps": 2000,
                                     "sync": False}, start_time_secs=1234.5)
    summaries.write_scalars(writer, 7, {"loss": 0.25})
    summaries.write_text(writer, 7, "checkpoint_path", "/m/model.ckpt-7")
    writer.close()
    (_, hparams), (step, loss), (_, text) = _values(str(tmp_path))
    assert hparams.tag == "_hparams_/session_start_info" and hparams.metadata.plugin_data.plugin_name == "hparams"
    data = _plugin_data_class().FromString(hparams.metadata.plugin_data.content)
    assert data.version == 0 and data.session_start_info.start_time_secs == 1234.5
    values = {key: value for key, value in data.session_start_info.hparams.items()}
    assert values["learning_rate"].number_value == 0.003 and values["train_steps"].number_value == 2000
    assert values["optimizer"].string_value == "adam" and values["sync"].WhichOneof("kind") == "bool_value"
    assert (step, loss.tag, loss.WhichOneof("value"), loss.simple_value) == (7, "loss", "simple_value", 0.25)
    assert tf.make_ndarray(text.tensor) == np.array(b"/m/model.ckpt-7", dtype=object)
    assert summaries.read_scalars(str(tmp_path))["loss"] == [(7, 0.25)]


def test_a_damaged_event_file_is_read_up_to_the_damage_with_a_warning_naming_it(tmp_path, caplog):
    writer = tf.summary.create_file_writer(str(tmp_path))
    for step in range(1, 6):
        summaries.write_scalars(writer, step, {"loss": 1.0 / step})
    writer.close()
    [path] = tf.io.gfile.glob(f"{tmp_path}/events.out.tfevents.*")
    whole = open(path, "rb").read()
    with open(path, "wb") as f:  # cut inside the last record (its header and part of its data)
        f.write(whole[:-20])
    with caplog.at_level("WARNING"):
        by_step = summaries.metrics_by_step([path])
    assert by_step == {step: {"loss": pytest.approx(1.0 / step)} for step in range(1, 5)}
    assert f"Event file {path} is damaged after its first 5 record(s)" in caplog.text  # the file version + 4

    with open(path, "wb") as f:  # garbage after the good records
        f.write(whole + b"\x07garbage that is no record at all" * 3)
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert list(summaries.read_scalars(str(tmp_path))["loss"]) == [(s, pytest.approx(1.0 / s)) for s in
                                                                       range(1, 6)]
    assert f"Event file {path} is damaged after its first 6 record(s)" in caplog.text


def test_user_codes_tf2_summaries_write_events_as_on_tf215_because_tensorboard_is_installed(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        assert tf.summary.scalar("accuracy", 0.5, step=3)  # TBNotInstalledError without the tensorboard package
        tf.summary.histogram("weights", [1.0, 2.0], step=3)
    writer.flush()
    (path,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    tags = {(v.tag, e.step) for e in tf.compat.v1.train.summary_iterator(path) for v in e.summary.value}
    assert tags == {("accuracy", 3), ("weights", 3)}


def test_event_files_are_read_in_the_order_they_were_written_not_as_text():
    """TensorFlow counts a process's writers in the file name: within one second the 11th writer's file
    (".11.v2") was written after the 9th's (".9.v2"), which sorting the names as text reverses."""
    names = [f"/m/events.out.tfevents.1700000000.host.42.{n}.v2" for n in (11, 9, 10)]
    assert sorted(names, key=summaries.written_order) == [names[1], names[2], names[0]]
    later_second = "/m/events.out.tfevents.1700000001.host.42.1.v2"
    assert sorted([later_second] + names, key=summaries.written_order)[-1] == later_second
