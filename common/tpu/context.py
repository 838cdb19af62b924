"""params["context"]: tf.estimator.tpu.TPUContext as one host with one replica.

On a TPU, TPUEstimator gave input_fn and model_fn a TPUContext saying how the
input pipeline was deployed over hosts and replicas; TPU input_fns shard
their files by it (`current_input_fn_deployment()`). Off a TPU, TF 2.15 gave
none, so such programs ran only on a TPU. Here they get the one-host answers:
the whole input on the host's CPU, invoked once, one replica; params
["batch_size"] is the global batch of the mode, which the towers split.
"""

HOST_DEVICE = "/device:CPU:0"


class TPUContext:
    """tf.estimator.tpu.TPUContext for one host and one replica (see the module).

    Args:
      mode: the ModeKeys of the call that is given this context.
    """

    num_replicas = 1
    num_hosts = 1
    current_host = 0
    num_of_replicas_per_host = 1
    device_assignment = None  # (no model parallelism: as TPUContext's without num_cores_per_replica)

    def __init__(self, mode):
        self.mode = mode

    def __repr__(self):
        return f"TPUContext(mode={self.mode!r}, one host, one replica)"

    def current_input_fn_deployment(self):
        """Returns (host device, invocation index, invocation count, replicas this invocation feeds), as
        TPUContext's: ("/device:CPU:0", 0, 1, 1)."""
        return HOST_DEVICE, 0, 1, 1

    def device_for_replica(self, replica_id):
        """Returns (host device, ordinal) of replica `replica_id`: ("/device:CPU:0", 0) for the one replica.

        Raises:
          ValueError: replica_id is not 0 (there is one replica).
        """
        if replica_id != 0:
            raise ValueError(f"TPUContext.device_for_replica({replica_id!r}): there is one replica here (0), "
                             "as TPUEstimator(use_tpu=False) runs on one host")
        return HOST_DEVICE, 0
