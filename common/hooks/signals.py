"""Graceful stop on SIGTERM / SIGINT.

During training the first signal asks the train loop to stop at the end of
the compiled loop in flight; the Estimator then saves a checkpoint at that
step and raises TrainingInterrupted, whose exit_status (128 + signal
number: 143 for SIGTERM, 130 for SIGINT) the mains exit with, as schedulers
expect. A second signal kills the process at once with the default action.
Outside training (evaluation, export) a signal raises StopSignal where the
program is, so every `finally` runs (a half-written export is removed) and
the main ends with one line and the same status.
"""

import contextlib
import dataclasses
import os
import signal
import threading
from typing import Optional

from tensorflow.compat.v1 import logging

from common.hooks.protocol import Hook
from common.state import checkpoints

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


STOP_VALUE = "cluster_stop_signal"  # the step value that says a host of the cluster received a stop signal


class TrainingInterrupted(SystemExit):
    """Training stopped on a signal after saving a checkpoint at `step` (`message` says it otherwise), the
    message logged. A SystemExit of status 128 + signal: uncaught, the program ends as a stop signal ends it
    (status 143 for SIGTERM), with that one line and no traceback, and no `except Exception` swallows it."""

    def __init__(self, signum, step, checkpoint, message=None):
        name = signal.Signals(signum).name
        message = message or (f"Stopped by {name} at global step {step}; saved {checkpoint}. Run the same "
                              "command again to resume.")
        super().__init__(message)
        logging.warning("%s", message)
        self.signum = signum
        self.step = step
        self.exit_status = self.code = 128 + signum


@dataclasses.dataclass
class ClusterStop:
    """How a stop signal reaches every host of a cluster: the host that receives one sets `variable` (its
    signal number); the train step all-reduces it with the loss, offered as STOP_VALUE, and the compiled
    loop of every host ends at that same step, where the chief (which holds model_dir) saves."""

    variable: object  # a float32 tf.Variable, 0 while no signal
    is_chief: bool
    model_dir: str


class StopSignal(BaseException):
    """A stop signal outside the train loop. A BaseException, like
    KeyboardInterrupt, so that no `except Exception` swallows it."""

    def __init__(self, signum):
        name = signal.Signals(signum).name
        super().__init__(f"Stopped by {name} outside the train loop; the model dir keeps its "
                         "checkpoints and nothing half-written is left. Run the same command again to go on.")
        self.exit_status = 128 + signum


def _raise_stop_signal(signum, frame):
    raise StopSignal(signum)


@contextlib.contextmanager
def raising_stop_signals():
    """While entered (in the main thread), SIGTERM and SIGINT raise StopSignal;
    the train loop's StopRequests takes them over while it trains."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise_stop_signal) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class StopRequests:
    """While entered (in the main thread), records the first stop signal."""

    def __init__(self):
        self.received = None
        self._previous = {}

    def _handle(self, signum, frame):
        if self.received is not None:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.received = signum
        logging.warning("Received %s: saving a checkpoint at the end of this loop, then stopping "
                        "(send it again to exit at once).", signal.Signals(signum).name)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()


@contextlib.contextmanager
def saying_what_stops(what):
    """While entered (in the main thread, where a signal would end the process untrapped): a stop signal
    still ends it, with the status it would have, after an ERROR line saying it stopped `what`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    untrapped = [signum for signum in STOP_SIGNALS if signal.getsignal(signum) is signal.SIG_DFL]

    def handle(signum, frame):
        logging.error("Received %s: %s stopped; nothing of it was written.", signal.Signals(signum).name, what)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in untrapped:
        signal.signal(signum, handle)
    try:
        yield
    finally:
        for signum in untrapped:
            signal.signal(signum, signal.SIG_DFL)


class StopOnSignalHook(Hook):
    """The stop rule for signals: after the loop in which one arrived, saves a
    checkpoint (unless the newest is of this step) and raises
    TrainingInterrupted. It must come after every other hook. Across hosts
    (cluster_stop), the signal is first passed to every host through the
    step; all stop at the step that carried it, and the chief saves."""

    def __init__(self, stop_requests, cluster_stop: Optional[ClusterStop] = None):
        self._requests = stop_requests
        self._cluster = cluster_stop
        self._passed_on = False

    def steps_to_trigger(self, step):
        return None  # (any number of steps a call suits it)

    def begin(self, context):
        if self._cluster is not None:
            self._cluster.variable.assign(0.0)

    def before_step(self, step):
        return (STOP_VALUE,) if self._cluster is not None else ()

    def after_step(self, step, values, context):
        received = self._requests.received
        if self._cluster is None:
            if received is not None:
                raise TrainingInterrupted(received, step, self._save(step, context))
            return
        if received is not None and not self._passed_on:
            self._cluster.variable.assign(float(received))  # the next step tells every host
            self._passed_on = True
        if not float(values.get(STOP_VALUE, 0.0)) > 0:
            return
        signum = received or signal.SIGTERM
        cause = f"Stopped by {signal.Signals(received).name}" if received else \
            "Stopped because another host of the cluster received a stop signal"
        if self._cluster.is_chief:
            raise TrainingInterrupted(signum, step, None, f"{cause}, at global step {step}; saved "
                                      f"{self._save(step, context)}. Run every host's command again to resume.")
        raise TrainingInterrupted(signum, step, None, f"{cause}, at global step {step}; the chief, which holds "
                                  f"{self._cluster.model_dir}, saves model.ckpt-{step} there. Run every host's "
                                  "command again to resume.")

    @staticmethod
    def _save(step, context):
        latest = context.latest_checkpoint()
        if not (latest and checkpoints.step_of(latest) == step):
            latest = context.save_checkpoint(step, initial=True)
        return latest
