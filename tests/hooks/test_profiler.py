"""ProfilerHook traces exactly the asked global steps into the model dir."""

import collections
import glob
import os

import pytest
from tensorflow.tsl.profiler.protobuf import xplane_pb2

import common
from common import hooks
from tests import models


def test_profiler_hook_traces_exactly_the_asked_steps(tmp_path):
    features, labels = models.blobs(64)
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 8},
                           config=common.RunConfig(steps_per_loop=10))
    est.train(models.train_input(features, labels, 32), steps=8, hooks=[hooks.ProfilerHook(3, 5)])
    traces = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.xplane.pb"))
    assert len(traces) == 1
    space = xplane_pb2.XSpace()
    with open(traces[0], "rb") as trace:
        space.ParseFromString(trace.read())
    runs = collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if "tower_0/classifier" in name:
                    runs[name] += 1
    assert runs and set(runs.values()) == {3}  # every tower op ran once per traced step: steps 3, 4, 5
    with pytest.raises(ValueError, match="1 <= first_step <= last_step, got 5 and 3"):
        hooks.ProfilerHook(5, 3)


def test_tf1s_save_steps_traces_one_step_in_every_n_each_into_a_folder_of_its_own(tmp_path):
    features, labels = models.blobs(64)
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 8})
    est.train(models.train_input(features, labels, 32), steps=7,
              hooks=[hooks.ProfilerHook(save_steps=3, output_dir=str(tmp_path / "prof"), show_memory=True)])
    traced = sorted(os.listdir(tmp_path / "prof"))
    assert traced == ["profile_step_3", "profile_step_6"]
    for folder in traced:
        assert len(glob.glob(str(tmp_path / "prof" / folder / "plugins" / "profile" / "*" / "*.xplane.pb"))) == 1
    with pytest.raises(ValueError, match="give save_steps=N, or first_step and last_step"):
        hooks.ProfilerHook(save_secs=10)
    with pytest.raises(ValueError, match="give save_steps >= 1"):
        hooks.ProfilerHook(3, 5, save_steps=10)
