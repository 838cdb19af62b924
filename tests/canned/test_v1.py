"""tf.compat.v1.estimator's premade estimators: TF1's default learning rates, the same models."""

import numpy as np

from common import canned
from common.canned import v1
from tests.canned import reference


def test_tf1s_linear_rate_is_capped_by_the_column_count(tmp_path):
    a, b, c = reference.columns()
    assert v1.LinearClassifier.rates.linear(100) == 0.1 and canned.LinearClassifier.rates.linear(100) == 0.2
    assert v1.DNNClassifier.rates.dnn == 0.05 and canned.DNNClassifier.rates.dnn == 0.001
    steps = {}
    for flavour in (canned, v1):
        estimator = flavour.DNNRegressor([3], [a, b], model_dir=str(tmp_path / flavour.__name__),
                                         warm_start_from=reference.write_initial_checkpoint(
                                             "dnnreg", str(tmp_path / flavour.__name__ / "start" / "ckpt-0")))
        estimator.train(reference.train_input(reference.FEATURES, reference.TARGETS), steps=1)
        steps[flavour] = estimator.get_variable_value("dnn/logits/bias") - \
            np.array(reference.CASES["dnnreg"]["initial"]["dnn/logits/bias"])
    np.testing.assert_allclose(steps[v1], 50 * steps[canned], rtol=1e-4)  # Adagrad's first step: rate times sign
