"""Learning-rate schedules as functions of the global step, with the TF1 meaning.

Both build on keras.optimizers.schedules, whose semantics already match
tf.compat.v1.train: piecewise gives values[i] while step <= boundaries[i].
A schedule can be called with the global step in model_fn (and the result
put in EstimatorSpec.learning_rate) or passed to a Keras optimizer.
"""

import keras

SCHEDULES = ("constant", "exponential", "piecewise")


def piecewise_constant(boundaries, values):
    """values[0] for step <= boundaries[0], values[i] for boundaries[i-1] < step <= boundaries[i].

    tf.compat.v1.train.piecewise_constant's rule, without its `x`: the schedule is called with the step.

    Args:
      boundaries: the global steps where the value changes: increasing, each >= 0.
      values: len(boundaries) + 1 numbers (made floats).

    Returns:
      A keras.optimizers.schedules.PiecewiseConstantDecay: schedule(step) -> the value, a float32 tensor.

    Raises:
      ValueError: values not one more than boundaries, or boundaries not increasing from >= 0.
    """
    boundaries, values = list(boundaries), list(values)
    if len(values) != len(boundaries) + 1:
        raise ValueError(
            f"piecewise_constant: {len(boundaries)} boundaries need "
            f"{len(boundaries) + 1} values, got {len(values)}"
        )
    if any(b >= a for b, a in zip(boundaries, boundaries[1:])) or any(b < 0 for b in boundaries):
        raise ValueError(f"piecewise_constant: boundaries must increase from >= 0, got {boundaries}")
    return keras.optimizers.schedules.PiecewiseConstantDecay(boundaries, [float(v) for v in values])


def exponential_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """learning_rate * decay_rate ** (step / decay_steps), the exponent floored when staircase.

    tf.compat.v1.train.exponential_decay, without its global_step: the schedule is called with the step.

    Args:
      learning_rate: the rate at step 0.
      decay_steps: the steps over which the rate is multiplied by decay_rate once (> 0).
      decay_rate: the factor per decay_steps (> 0; < 1 decays).
      staircase: decay in whole steps of decay_steps (an integer exponent), not continuously.

    Returns:
      A keras.optimizers.schedules.ExponentialDecay: schedule(step) -> the rate, a float32 tensor.

    Raises:
      ValueError: decay_steps or decay_rate not > 0.
    """
    if decay_steps <= 0:
        raise ValueError(f"exponential_decay: decay_steps must be > 0, got {decay_steps}")
    if decay_rate <= 0:
        raise ValueError(f"exponential_decay: decay_rate must be > 0, got {decay_rate}")
    return keras.optimizers.schedules.ExponentialDecay(
        float(learning_rate), decay_steps, float(decay_rate), staircase=staircase
    )


class Constant(keras.optimizers.schedules.LearningRateSchedule):
    """The same rate at every step (a schedule, so callers need no special case)."""

    def __init__(self, learning_rate):
        self.learning_rate = float(learning_rate)

    def __call__(self, step):
        return keras.ops.convert_to_tensor(self.learning_rate, dtype="float32")

    def get_config(self):
        return {"learning_rate": self.learning_rate}


def constant(learning_rate):
    return Constant(learning_rate)


def by_name(name, learning_rate, decay_steps=None, decay_rate=None, staircase=False,
            boundaries=(), multipliers=()):
    """The schedule a `--lr_schedule` flag names.

    piecewise: the rates are learning_rate * multipliers[i].
    """
    if name == "constant":
        return constant(learning_rate)
    if name == "exponential":
        return exponential_decay(learning_rate, decay_steps, decay_rate, staircase)
    if name == "piecewise":
        return piecewise_constant(boundaries, [learning_rate * m for m in multipliers])
    raise ValueError(f"--lr_schedule={name!r} is not one of {', '.join(SCHEDULES)}")
