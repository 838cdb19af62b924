"""tf.compat.v1.summary.FileWriter outside model_fn: Summary protos written to an event file, eagerly.

TF1 programs wrote results of their own beside the Estimator's (the official
Transformer's BLEU score after each evaluation) with
`FileWriter(dir).add_summary(tf.Summary(value=[...]), step)`. TensorFlow's
FileWriter refuses eager execution; this one writes each Summary proto as it
is through a TF 2 writer, so TensorBoard reads the same events. A graph has
nothing to write here: given one, that is said once.
"""

import tensorflow as tf
from tensorflow.compat.v1 import logging


class FileWriter:
    """tf.compat.v1.summary.FileWriter: add_summary, flush, close, get_logdir."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        del session
        if graph is not None or graph_def is not None:
            logging.info("FileWriter(%s): there is no TF1 graph here to write; summaries are written", logdir)
        self._logdir = logdir
        self._writer = tf.summary.create_file_writer(logdir, max_queue=max_queue, flush_millis=flush_secs * 1000,
                                                     filename_suffix=filename_suffix)

    def add_summary(self, summary, global_step=None):
        """Writes a Summary proto (or its serialized bytes) at `global_step` (0 when None, as TF1 wrote)."""
        serialized = summary if isinstance(summary, bytes) else summary.SerializeToString()
        with self._writer.as_default():
            tf.summary.experimental.write_raw_pb(serialized, step=0 if global_step is None else int(global_step))

    def get_logdir(self):
        return self._logdir

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
