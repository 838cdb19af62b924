"""What TF1 code inside model_fn asks of the Estimator calling it: the interface between this runtime and the core.

TF1 code reads state its graph held: a variable's name as the graph knew it
(`var.op.name`, a slot's "<variable>/Adam"), and, in a train tower, whether
an optimizer's update is to be done now or after the towers. The core's
variable registry (common.variables.registry) answers while it runs a call
of model_fn (`answering`); the runtime's modules ask `current()`, and never
import the core.
"""

import contextlib
import contextvars
from typing import Callable, List, Optional, Protocol, Tuple


class Caller(Protocol):
    """What the running model_fn call answers (common.variables.registry.ModelRegistry is the one)."""

    @property
    def deferring(self) -> bool:
        """Whether an optimizer's apply_gradients is to be recorded, not done (a train tower's call)."""

    def name_of(self, variable) -> Optional[str]:
        """The name a TF1 graph gave `variable` (its TF1 name, a Keras layer's path), or None."""

    def defer_update(self, optimizer, grads_and_vars: List[Tuple[object, object]], apply: Callable):
        """Records an optimizer's update, done after the towers with the averaged gradients by
        apply(averaged_grads_and_vars); returns the op that stands for it."""


_CALLER = contextvars.ContextVar("common_model_fn_caller", default=None)


def current() -> Optional[Caller]:
    """The Caller of the model_fn call running now (in this thread or task), or None outside model_fn."""
    return _CALLER.get()


@contextlib.contextmanager
def answering(caller: Caller):
    """While entered, `caller` answers current()."""
    token = _CALLER.set(caller)
    try:
        yield caller
    finally:
        _CALLER.reset(token)
