"""A small synchronous job for the multi-worker tests (python -m tests.multiworker_job).

With TF_CONFIG it is one host of a cluster; without, the single-process
reference. Data come in a fixed order (no shuffle), so host i of N trains on
batches i, i+N, ... and the reference with an N-times larger batch sees the
union of the hosts' batches at every step.
"""

import keras
import numpy as np
from absl import app, flags

import common
from common.devices import hosts
from common.jobs import cli
from tests import models

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Where the chief's checkpoints go.")
flags.DEFINE_integer("train_steps", 6, "Global steps.")
flags.DEFINE_integer("batch_size", 16, "Batch per host.")
flags.DEFINE_string("dump", None, "Write every variable's final value to this .npz file.")
flags.DEFINE_integer("collective_timeout_secs", 60, "Cross-host all-reduce timeout.")
flags.DEFINE_integer("cluster_start_timeout_secs", 120, "How long to wait for the other tasks to start.")


def model_fn(features, labels, mode, params):
    net = common.get_module("net", lambda: keras.Sequential([
        keras.layers.Dense(32, activation="tanh", name="hidden"), keras.layers.Dense(3, name="logits")], name="mlp"))
    logits = net(features)
    loss = keras.ops.mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    optimizer = common.get_optimizer(lambda: keras.optimizers.SGD(0.1, momentum=0.9))
    return common.EstimatorSpec(mode, loss=loss, optimizer=optimizer, predictions=logits)


def main(argv):
    del argv
    cluster = hosts.from_tf_config(FLAGS.collective_timeout_secs, FLAGS.cluster_start_timeout_secs)
    features, labels = models.blobs(4096, dim=8)
    config = common.RunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=2, tf_random_seed=3,
                              steps_per_loop=2, cluster=cluster)
    estimator = common.Estimator(model_fn, config=config)
    estimator.train(models.train_input(features, labels, FLAGS.batch_size), max_steps=FLAGS.train_steps)
    if FLAGS.dump:
        np.savez(FLAGS.dump, **{name.replace("/", "|"): v for name, v in estimator.variable_values().items()})
    print(f"done: chief={estimator.is_chief}", flush=True)


if __name__ == "__main__":
    flags.mark_flag_as_required("model_dir")
    app.run(cli.reporting_errors(main))
