"""When periodic work fires: every N steps or every N seconds.

One trigger serves every periodic hook and train_and_evaluate's eval
throttle, as tf.estimator's SecondOrStepTimer did: the hook (or the
throttle) says what to do, the trigger says when.
"""

import time


class Trigger:
    """Fires every N steps or every N seconds.

    Step triggers fall on multiples of N (the train loop cuts its loops so
    that it stops there), so event files line up across runs and resumes;
    with aligned=False they fall N steps after the last firing instead, as
    TF1's LoggingTensorHook counted its iterations. A seconds trigger fires
    at its first check, then once N seconds have passed since it last fired
    (N = 0: at every check). With first=True the first check of a step
    trigger fires too.
    """

    def __init__(self, every_steps=None, every_secs=None, clock=time.time, first=False, aligned=True):
        if (every_steps is None) == (every_secs is None):
            raise ValueError(
                f"give exactly one of every_n_steps / every_n_secs, got {every_steps} and {every_secs}"
            )
        if (every_steps is not None and every_steps < 1) or (every_secs is not None and every_secs < 0):
            raise ValueError(f"trigger period must be positive, got {every_steps or every_secs}")
        self.every_steps = every_steps
        self.every_secs = every_secs
        self.clock = clock
        self.first = first
        self.aligned = aligned
        self.last_step = None
        self.last_time = None

    def should_trigger(self, step):
        if self.last_step is None and (self.first or self.every_secs is not None):
            return True
        if self.every_steps is not None:
            if self.last_step is None:
                return step % self.every_steps == 0
            if not self.aligned:
                return step >= self.last_step + self.every_steps
            return step // self.every_steps > self.last_step // self.every_steps
        return self.clock() >= self.last_time + self.every_secs

    def steps_to_trigger(self, step):
        """Steps until the next step trigger (1 for a first one), or None for a seconds trigger."""
        if self.last_step is None and self.first:
            return 1
        if self.every_steps is None:
            return None
        if not self.aligned and self.last_step is not None:
            return max(1, self.last_step + self.every_steps - step)
        return self.every_steps - step % self.every_steps

    def reset(self):
        """Forgets the last firing: the next check is a first one again."""
        self.last_step = self.last_time = None

    def update(self, step):
        """Marks a trigger at `step`; returns (seconds, steps) since the last one, or None."""
        now = self.clock()
        elapsed = None
        if self.last_step is not None:
            elapsed = (now - self.last_time, step - self.last_step)
        self.last_step, self.last_time = step, now
        return elapsed
