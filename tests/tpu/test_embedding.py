"""TPU embeddings off a TPU: TPUEstimator's embedding_config_spec checked and its tables trained as ordinary
variables by model_fn's optimizer, as TF 2.15 ran tests/programs/tf1_tpu_embeddings.py (numbers recorded there:
tests/data/tf215_tpu/embeddings.json)."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from common.tpu import embedding
from common.tpu import estimator as tpu
from common.tpu import run_config
from tests import DATA
from tests.programs import upgraded


def test_the_upgraded_tpu_recommender_trains_its_tables_as_tf_estimator_2_15_did(tmp_path, caplog):
    with open(os.path.join(DATA, "tf215_tpu", "embeddings.json")) as recorded:
        theirs = json.load(recorded)
    program = upgraded("tf1_tpu_embeddings", str(tmp_path))
    with caplog.at_level("INFO", logger="tensorflow"):
        values, _ = program.train(str(tmp_path / "model"), steps=3)
    # (a Keras layer's variables built in model_fn are "model_fn/<path>" here: docs/MIGRATING.md)
    values = {name.removeprefix("model_fn/"): value for name, value in values.items()}
    assert sorted(values) == sorted(theirs)
    for name, value in theirs.items():
        np.testing.assert_allclose(values[name], value, rtol=1e-5, atol=1e-7, err_msg=name)
    assert not np.allclose(values["item_last_item_shared_embedding"], program.ITEM_TABLE)  # (it did train)
    assert "the embedding columns' tables train as ordinary variables, by model_fn's optimizer" in caplog.text
    assert "(AdagradParameters(learning_rate=0.1) is not used)" in caplog.text


def _columns():
    ids = tf.feature_column.categorical_column_with_identity("ids", 4)
    return [tf.compat.v1.tpu.experimental.embedding_column(ids, 2)], ids


def _model_fn(features, labels, mode):
    raise AssertionError("not called")


def test_what_tf_2_15_refused_of_an_embedding_config_spec_is_refused_by_name():
    columns, ids = _columns()
    adagrad = embedding.AdagradParameters(0.1)
    with pytest.raises(ValueError, match="give exactly one of feature_columns and the pair"):
        embedding.EmbeddingConfigSpec(optimization_parameters=adagrad)
    with pytest.raises(TypeError, match="feature column 'ids' is a IdentityCategoricalColumn"):
        embedding.EmbeddingConfigSpec(feature_columns=[ids], optimization_parameters=adagrad)
    with pytest.raises(ValueError, match="optimization_parameters must be one of AdagradParameters.*got float"):
        embedding.EmbeddingConfigSpec(feature_columns=columns, optimization_parameters=0.1)
    with pytest.raises(ValueError, match="partition_strategy='mod'\\)\\): mod sharding of embedding tables"):
        tpu.TPUEstimator(_model_fn, use_tpu=False, train_batch_size=4, embedding_config_spec=embedding.
                         EmbeddingConfigSpec(feature_columns=columns, optimization_parameters=adagrad,
                                             partition_strategy="mod"))
    with pytest.raises(ValueError, match="per_host_input_for_training=1\\): TPU embeddings take PER_HOST_V1"):
        tpu.TPUEstimator(_model_fn, use_tpu=False, train_batch_size=4, config=run_config.RunConfig(
            tpu_config=run_config.TPUConfig(per_host_input_for_training=run_config.InputPipelineConfig.PER_SHARD_V1)),
            embedding_config_spec=embedding.EmbeddingConfigSpec(feature_columns=columns,
                                                                optimization_parameters=adagrad))
    adam = embedding.AdamParameters(0.01, beta2=0.9)
    assert (adam.learning_rate, adam.beta1, adam.beta2, adam.epsilon) == (0.01, 0.9, 0.9, 1e-08)
