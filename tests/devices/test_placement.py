"""Where variables live: all on /cpu:0, or spread greedily by bytes with their slots alongside."""

import tensorflow as tf

from common.devices import placement
from tests import models

FEATURES, LABELS = models.blobs(256)


def test_cpu_strategy_puts_variables_and_slots_on_cpu0(tmp_path):
    est = models.tower_estimator(tmp_path, 2, "CPU", batch_norm=True)
    est.train(models.one_batch(FEATURES, LABELS), steps=1)
    devices = est.variable_devices()
    assert len(devices) > 10
    assert set(devices.values()) == {"/job:localhost/replica:0/task:0/device:CPU:0"}


def test_gpu_strategy_spreads_variables_greedily_with_slots_alongside(tmp_path):
    est = models.tower_estimator(tmp_path, 4, "GPU", hidden=64, batch_norm=True)
    est.train(models.one_batch(FEATURES, LABELS), steps=1)
    placement = est.variable_placement
    loads = {}
    for name, size, device in placement:
        assert loads.get(device, 0) == min(loads.get(d, 0) for d in ("/cpu:0", "/cpu:1", "/cpu:2", "/cpu:3"))
        loads[device] = loads.get(device, 0) + size
    total, largest = sum(s for _, s, _ in placement), max(s for _, s, _ in placement)
    assert len(loads) == 4
    assert max(loads.values()) <= total / 4 + largest
    devices = est.variable_devices()
    model_devices = {n: d for n, d in devices.items() if n.startswith("net/")}
    assert len(set(model_devices.values())) == 4
    for name, device in model_devices.items():
        slot = "optimizer/" + name[len("net/"):].replace("/", "_") + "_momentum"
        if slot in devices:
            assert devices[slot] == device, slot
    assert sum(1 for n in devices if n.endswith("_momentum")) == 6


def _traces_of(make_variable):
    """How often a tf.function whose first trace makes a variable through outside_the_trace is traced."""
    traces, made = [], []

    def creator(next_creator, **kwargs):
        with placement.outside_the_trace(kwargs) as kwargs:
            return next_creator(**kwargs)

    @tf.function(autograph=False)
    def fn(x):
        traces.append(1)
        if not made:
            with tf.variable_creator_scope(creator):
                made.append(make_variable(x))
        return x + made[0]

    assert float(fn(tf.constant(1.0))) == 3.0
    return len(traces), made[0]


def test_a_variable_made_outside_the_trace_is_an_eager_variable_and_the_function_traces_once():
    traces, variable = _traces_of(lambda x: tf.Variable(lambda: tf.constant(2.0), name="v"))
    assert traces == 1 and variable.numpy() == 2.0


def test_a_variable_whose_initial_value_is_a_tensor_of_the_trace_is_lifted_by_it():
    traces, variable = _traces_of(lambda x: tf.Variable(x * 2.0, name="v"))  # (TF lifts it: a second trace)
    assert traces == 2 and variable.numpy() == 2.0
