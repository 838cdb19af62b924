"""tf.compat.v1.summary.FileWriter outside model_fn writes a program's own Summary protos, as TF1's did."""

import tensorflow as tf

from common.state import summaries
from common.tf1.file_writer import FileWriter


def test_a_summary_proto_is_written_at_its_step_and_read_back_as_tensorboard_reads_it(tmp_path):
    with FileWriter(str(tmp_path / "eval_bleu"), graph=tf.compat.v1.get_default_graph()) as writer:
        summary = tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(tag="bleu/uncased", simple_value=12.5)])
        writer.add_summary(summary, 100)
        writer.add_summary(summary.SerializeToString(), 200)  # (TF1 took the serialized proto too)
        assert writer.get_logdir() == str(tmp_path / "eval_bleu")
    assert summaries.read_scalars(str(tmp_path / "eval_bleu")) == {"bleu/uncased": [(100, 12.5), (200, 12.5)]}
