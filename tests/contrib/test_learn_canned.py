"""tf.contrib.learn's premade estimators as TensorFlow 1.0's getting-started program used them: fit, evaluate and
predict on arrays, the unnamed column, contrib's prediction keys, the mean loss."""

import numpy as np
import pytest

from common.contrib import columns as contrib_columns
from common.contrib import learn, learn_datasets
from common.contrib import learn_canned as contrib_learn

IRIS = learn_datasets.load_iris()


def test_the_getting_started_dnn_classifier_fits_evaluates_and_predicts_class_ids(tmp_path):
    classifier = contrib_learn.DNNClassifier(feature_columns=[contrib_columns.real_valued_column("", dimension=4)],
                                             hidden_units=[10, 20, 10], n_classes=3, model_dir=str(tmp_path))
    classifier.fit(x=IRIS.data, y=IRIS.target, steps=200)
    results = classifier.evaluate(x=IRIS.data, y=IRIS.target)
    assert results["accuracy"] > 0.9 and results["global_step"] == 200
    assert results["loss"] == pytest.approx(results["average_loss"])  # contrib's heads: the mean loss
    predicted = list(classifier.predict(np.array([[6.4, 3.2, 4.5, 1.5], [5.8, 3.1, 5.0, 1.7]]), as_iterable=True))
    assert [type(p) for p in predicted] == [np.int64, np.int64] and predicted[0] in (1, 2)
    probabilities = classifier.predict_proba(IRIS.data[:3], as_iterable=False)
    assert probabilities.shape == (3, 3) and probabilities.argmax(1).tolist() == [0, 0, 0]
    both = next(classifier.predict(IRIS.data[:1], outputs=["classes", "probabilities"]))
    assert set(both) == {"classes", "probabilities"} and both["classes"] == 0
    skl = learn.SKCompat(classifier).predict(IRIS.data)
    assert set(skl) == {"classes", "probabilities", "logits"} and (skl["classes"] == IRIS.target).mean() > 0.9


def test_a_linear_regressor_on_inferred_columns_predicts_values_and_refuses_what_it_lacks(tmp_path):
    x = np.linspace(0, 1, 20)
    columns = contrib_learn.infer_real_valued_columns_from_input(x.reshape(20, 1))
    assert [(c.key, c.shape) for c in columns] == [("", (1,))]
    regressor = contrib_learn.LinearRegressor(feature_columns=columns, model_dir=str(tmp_path),
                                              optimizer="SGD")
    regressor.fit(x=x, y=3 * x + 1, batch_size=5, steps=300)
    scores = regressor.predict(x=x[:3], as_iterable=False)
    assert scores.shape == (3,)
    np.testing.assert_allclose(scores, 3 * x[:3] + 1, atol=0.3)
    with pytest.raises(ValueError, match="gradient_clip_norm, enable_centered_bias=True have no counterpart"):
        contrib_learn.DNNRegressor([4], columns, gradient_clip_norm=5.0, enable_centered_bias=True)
    assert [c.key for c in contrib_learn.infer_real_valued_columns_from_input({"b": x, "a": x})] == ["a", "b"]
