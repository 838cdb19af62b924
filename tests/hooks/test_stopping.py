"""The stop rules: StopAtStepHook at its step, NanTensorHook naming the step that diverged."""

import numpy as np
import pytest

from common import hooks
from tests.hooks import context


def test_nan_hook_names_the_step():
    hook = hooks.NanTensorHook()
    hook.after_step(3, {"loss": np.float32(0.5)}, context())
    with pytest.raises(hooks.NanLossDuringTrainingError, match="global step 7"):
        hook.after_step(7, {"loss": np.float32(np.nan)}, context())
    ctx = context()
    hooks.NanTensorHook(fail_on_nan_loss=False).after_step(7, {"loss": np.inf}, ctx)
    assert ctx.stop_requested


def test_stop_at_step_hook():
    hook = hooks.StopAtStepHook(num_steps=10)
    ctx = context(start_step=20)
    hook.begin(ctx)
    assert hook.last_step == 30
    assert hook.steps_to_trigger(25) == 5
    hook.after_step(29, {}, ctx)
    assert not ctx.stop_requested
    hook.after_step(30, {}, ctx)
    assert ctx.stop_requested
