"""TPUEstimator's front door: programs written for tf.estimator.tpu (BERT's, much research code) run with
use_tpu=False on the towers of the device plan, as TPUEstimator ran them on a CPU or GPU."""
