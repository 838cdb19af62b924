"""Where start-up goes: the seconds from a train() or evaluate() call to the end of its first compiled call,
by phase, logged once per call.

A user waiting on the first loss line (and a continuous evaluator, which pays start-up once per checkpoint)
sees whether it is input_fn, tracing model_fn, tracing the compiled loop or compiling it that takes the time.
"""

import time
from typing import Callable, Dict, Optional, Tuple

from tensorflow.compat.v1 import logging

from common.engine.loops import LoopResult


class StartupClock:
    """Laps of one call's start-up: lap(phase) charges the time since the previous lap to `phase`."""

    def __init__(self, call: str, clock: Callable[[], float] = time.perf_counter):
        self._call = call
        self._clock = clock
        self._start = self._last = clock()
        self.phases: Dict[str, float] = {}  # phase -> seconds, in the order first charged
        self.reported = False

    def lap(self, phase: str):
        now = self._clock()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self._last = now

    @property
    def total(self) -> float:
        return self._last - self._start

    def report(self, last_phase: str):
        """Charges the time since the last lap to `last_phase`, then logs the whole split (once)."""
        if self.reported:
            return
        self.lap(last_phase)
        self.reported = True
        split = ", ".join(f"{phase} {seconds:.2f} s" for phase, seconds in self.phases.items())
        logging.info("Start-up of %s: %.2f s to the end of the first compiled call (%s).", self._call, self.total,
                     split)


def timing_first_call(run: Callable[..., LoopResult], clock: StartupClock, trace: Optional[Callable[[], object]],
                      units: Tuple[str, str]) -> Callable[..., LoopResult]:
    """run(...) whose first call is split on `clock`: what came before it ("restoring and starting hooks"),
    trace() (tracing the loop, without running it; None: the first call runs the step alone, the loop compiling
    on a thread: common.engine.first_steps) and the first call itself (compiling what it runs and running its
    steps; units: the singular and plural of what a step is, ("step", "steps"))."""

    def timed(*args):
        if clock.reported:
            return run(*args)
        clock.lap("restoring and starting hooks")
        if trace is not None:
            trace()
            clock.lap("tracing the loop")
        result = run(*args)
        clock.report(f"compiling and running {result.steps} {units[result.steps != 1]}")
        return result

    return timed
