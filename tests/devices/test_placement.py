"""Where variables live: all on /cpu:0, or spread greedily by bytes with their slots alongside."""

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
