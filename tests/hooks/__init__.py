"""Tests of common.hooks, and the fakes they share."""

from common import hooks


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def context(available=("loss", "learning_rate", "global_step"), start_step=0):
    return hooks.RunContext("/nonexistent", available, start_step=start_step)
