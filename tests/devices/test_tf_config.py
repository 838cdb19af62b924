"""TF_CONFIG checked whole, ps tasks included (the chief/worker checks run in test_hosts, through from_tf_config)."""

import re

import pytest

from common.devices import tf_config


@pytest.mark.parametrize("raw, words", [
    ('{"cluster": {"chief": ["h:1"], "ps": ["h:2"], "worker": ["h:3"]}, "task": {"type": "ps", "index": 1}}',
     "TF_CONFIG task ps:1 is not in the cluster: it has 1 ps task(s)"),
    ('{"cluster": {"chief": ["h:1"], "ps": ["h:2"]}, "task": {"type": "master"}}',
     "TF_CONFIG task.type = 'master' is not one of chief, worker, ps, evaluator"),
])
def test_tf_config_with_ps_tasks_is_checked_by_name(raw, words):
    with pytest.raises(tf_config.ClusterConfigError, match=re.escape(words)):
        tf_config.checked_tf_config(raw)
    assert tf_config.checked_tf_config(raw.replace('"index": 1', '"index": 0').replace('"master"', '"ps"'))[1] == "ps"
