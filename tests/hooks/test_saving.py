"""CheckpointSaverHook: saves at the start, every N steps and at the end, never a non-finite state."""

import numpy as np

from common import hooks


def test_checkpoint_saver_skips_non_finite_state():
    saved = []
    ctx = hooks.RunContext("/x", ("loss",), start_step=0, save_checkpoint=lambda step, initial: saved.append(step),
                           latest_checkpoint=lambda: None)
    hook = hooks.CheckpointSaverHook(save_steps=5)
    hook.begin(ctx)
    hook.after_step(5, {"loss": np.float32(1.0)}, ctx)
    hook.after_step(10, {"loss": np.float32(np.nan)}, ctx)
    hook.end(10, ctx)
    assert saved == [0, 5]
