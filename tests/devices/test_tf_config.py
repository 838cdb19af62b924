"""TF_CONFIG checked whole, ps tasks included (the chief/worker checks run in test_hosts, through from_tf_config)."""

import re

import pytest

from common.devices import tf_config


@pytest.mark.parametrize("raw, words", [
    ('{"cluster": {"chief": ["h:1"], "ps": ["h:2"], "worker": ["h:3"]}, "task": {"type": "ps", "index": 1}}',
     "TF_CONFIG task ps:1 is not in the cluster: it has 1 ps task(s)"),
    ('{"cluster": {"chief": ["h:1"], "ps": ["h:2"]}, "task": {"type": "boss"}}',
     "TF_CONFIG task.type = 'boss' is not one of chief, worker, ps, evaluator"),
    ('{"cluster": {"chief": ["h:1"], "master": ["h:3"], "ps": ["h:2"]}, "task": {"type": "ps"}}',
     "TF_CONFIG has both master and chief tasks: master is TF1's name of the chief"),
])
def test_tf_config_with_ps_tasks_is_checked_by_name(raw, words):
    with pytest.raises(tf_config.ClusterConfigError, match=re.escape(words)):
        tf_config.checked_tf_config(raw)
    fixed = raw.replace('"index": 1', '"index": 0').replace('"boss"', '"ps"').replace('"master": ["h:3"], ', "")
    assert tf_config.checked_tf_config(fixed)[1] == "ps"


def test_tf1s_master_task_is_the_chief():
    """The official CIFAR-10 example's README (and contrib.learn) named the chief "master"."""
    cluster, task_type, index = tf_config.checked_tf_config(
        '{"cluster": {"master": ["h:1"], "worker": ["h:3"], "ps": ["h:2"]}, "task": {"type": "master", "index": 0}}')
    assert cluster == {"chief": ["h:1"], "worker": ["h:3"], "ps": ["h:2"]} and (task_type, index) == ("chief", 0)
