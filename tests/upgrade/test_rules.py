"""The upgrade rules on source texts: estimator, TF1 and Keras 2 names rewritten, the rest left as written."""

import logging
import textwrap

import pytest
from absl import logging as absl_logging

import common
from common.upgrade import rules as upgrade_rules


def upgrade(source):
    return upgrade_rules.upgrade_source(textwrap.dedent(source))


def test_estimator_names_become_the_projects_and_the_rest_is_left_as_written():
    new, changes = upgrade('''\
        """Doc."""
        import tensorflow as tf  # the framework


        def model_fn(features, labels, mode):   # odd  spacing kept
            if mode == tf.estimator.ModeKeys.PREDICT:
                return tf.compat.v1.estimator.EstimatorSpec(mode, predictions=features)
            return tf.estimator.EstimatorSpec(mode, loss=tf.reduce_sum(features),
                                              train_op=tf.compat.v1.train.MomentumOptimizer(0.1, 0.9).minimize(
                                                  tf.reduce_sum(features), tf.compat.v1.train.get_global_step()))


        est = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(save_checkpoints_steps=5))
        rx = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.compat.v1.placeholder(tf.float32)})
        ''')
    assert new == textwrap.dedent('''\
        """Doc."""
        import common
        import common.tf1.train
        import tensorflow as tf  # the framework


        def model_fn(features, labels, mode):   # odd  spacing kept
            if mode == common.ModeKeys.PREDICT:
                return common.EstimatorSpec(mode, predictions=features)
            return common.EstimatorSpec(mode, loss=tf.reduce_sum(features),
                                              train_op=common.tf1.train.MomentumOptimizer(0.1, 0.9).minimize(
                                                  tf.reduce_sum(features), common.get_global_step()))


        est = common.Estimator(model_fn, config=common.RunConfig(save_checkpoints_steps=5))
        rx = common.build_raw_serving_input_receiver_fn({"x": common.placeholder(tf.float32)})
        ''')
    assert not any(change.refused for change in changes)
    assert [(c.line, c.message) for c in changes][:3] == [
        (2, "added import common"), (2, "added import common.tf1.train"),
        (6, "renamed tf.estimator.ModeKeys to common.ModeKeys")]


def test_keras_2_spellings_become_keras_3s():
    new, _ = upgrade('''\
        import tensorflow as tf
        loss = tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)
        mean = tf.keras.losses.Huber(reduction=tf.keras.losses.Reduction.SUM_OVER_BATCH_SIZE)
        opt = tf.keras.optimizers.legacy.Adam(lr=0.01, beta_1=0.8)
        sgd = tf.keras.optimizers.SGD(lr=0.1, decay=dict(lr=1)["lr"])
        lr = 3
        ''')
    assert new.splitlines()[1:5] == [
        'loss = tf.keras.losses.MeanSquaredError(reduction="none")',
        'mean = tf.keras.losses.Huber(reduction="sum_over_batch_size")',
        "opt = tf.keras.optimizers.Adam(learning_rate=0.01, beta_1=0.8)",
        'sgd = tf.keras.optimizers.SGD(learning_rate=0.1, decay=dict(lr=1)["lr"])']
    assert new.splitlines()[5] == "lr = 3"


def test_graph_mode_switches_are_commented_out_and_unmappable_names_refused_by_line():
    new, changes = upgrade('''\
        import tensorflow as tf
        tf.compat.v1.disable_eager_execution()
        if True:
            x = tf.compat.v1.disable_v2_behavior() or 1
        y = tf.contrib.distributions.Normal(x, 1.0)
        head = tf.estimator.DNNRankingEstimator(hidden_units=[3])
        sync = tf.compat.v1.train.SyncReplicasOptimizer(None, 2)
        setter = tf.train.replica_device_setter(ps_tasks=2)
        cols = [tf.feature_column.numeric_column("x")]
        dense = tf.keras.layers.DenseFeatures(cols)
        ''')
    assert new.splitlines()[:4] == ["import common", "import common.layers", "import common.tf1.device_setter",
                                    "import tensorflow as tf"]
    assert new.splitlines()[4] == ("# tf.compat.v1.disable_eager_execution()  "
                                   "# removed by common.upgrade: this project runs TF2 eagerly")
    refused = [(c.line, c.message.split(":")[0]) for c in changes if c.refused]
    assert refused == [(4, "tf.compat.v1.disable_v2_behavior() must go"), (5, "tf.contrib.distributions.Normal"),
                       (6, "tf.estimator.DNNRankingEstimator"), (7, "tf.compat.v1.train.SyncReplicasOptimizer")]
    # (None without ps tasks, as TF1's; refused by count with them, when it runs: common.tf1.device_setter)
    assert new.splitlines()[10] == "setter = common.tf1.device_setter.replica_device_setter(ps_tasks=2)"
    assert "no counterpart here" in next(c.message for c in changes if c.line == 6)
    assert new.splitlines()[-1] == "dense = common.layers.DenseFeatures(cols)"  # Keras 2's layer, here


def test_shared_embedding_columns_of_either_spelling_are_built_where_tensorflow_refuses_them_eagerly():
    new, _ = upgrade('''\
        import tensorflow as tf
        a = tf.feature_column.shared_embedding_columns([c, h], 4)
        b = tf.compat.v1.feature_column.shared_embedding_columns([c, h], 4, combiner="sum")
        ''')
    assert new.splitlines()[-2:] == [
        "a = common.tf1.feature_column.shared_embedding_columns([c, h], 4)",
        'b = common.tf1.feature_column.shared_embedding_columns([c, h], 4, combiner="sum")']
    assert "import common.tf1.feature_column" in new.splitlines()


def test_premade_estimators_and_heads_become_common_canneds_with_tf1s_flavour_kept():
    new, changes = upgrade('''\
        import tensorflow as tf
        a = tf.estimator.DNNClassifier([3], cols)
        b = tf.compat.v1.estimator.LinearRegressor(cols)
        c = tf.compat.v1.estimator.DNNLinearCombinedClassifier(dnn_feature_columns=cols)
        h = tf.estimator.MultiClassHead(3)
        t = tf.estimator.BoostedTreesClassifier(cols, 1)
        ''')
    assert new.splitlines()[:3] == ["import common", "import common.canned", "import common.canned.v1"]
    body = new.splitlines()[-5:]
    assert body == ["a = common.canned.DNNClassifier([3], cols)", "b = common.canned.v1.LinearRegressor(cols)",
                    "c = common.canned.v1.DNNLinearCombinedClassifier(dnn_feature_columns=cols)",  # (it summed)
                    "h = common.canned.MultiClassHead(3)", "t = common.canned.BoostedTreesClassifier(cols, 1)"]
    assert not any(c.refused for c in changes)


def test_a_tf1_originals_premade_estimators_are_tf1s_and_its_numpy_input_fns_the_projects():
    new, changes = upgrade('''\
        import tensorflow as tf
        tf.logging.set_verbosity(tf.logging.INFO)
        a = tf.estimator.DNNClassifier([3], cols)
        h = tf.estimator.MultiClassHead(3)
        i = tf.estimator.inputs.numpy_input_fn(x, y, shuffle=True)
        j = tf.compat.v1.estimator.inputs.pandas_input_fn(frame, shuffle=False)
        ''')
    body = new.splitlines()[-4:]
    assert body == ["a = common.canned.v1.DNNClassifier([3], cols)",  # TF1's tf.estimator.DNNClassifier summed
                    "h = common.canned.MultiClassHead(3)",
                    "i = common.estimator.inputs.numpy_input_fn(x, y, shuffle=True)",
                    "j = common.estimator.inputs.pandas_input_fn(frame, shuffle=False)"]
    assert "import common.estimator.inputs" in new.splitlines()
    assert not any(c.refused for c in changes)


def test_an_already_upgraded_file_is_left_as_it_is():
    once, _ = upgrade('''\
        import tensorflow as tf
        est = tf.estimator.Estimator(None)
        ''')
    twice, changes = upgrade_rules.upgrade_source(once)
    assert twice == once and changes == []


def test_tf1_layers_and_metrics_become_common_tf1s_and_keras_metric_classes_stay():
    new, changes = upgrade('''\
        import tensorflow as tf
        net = tf.compat.v1.layers.dense(tf.layers.flatten(x), 10)
        ops = {"acc": tf.compat.v1.metrics.accuracy(y, p), "auc": tf.metrics.auc(y, p)}
        keras_metric = tf.metrics.Accuracy()
        odd = tf.compat.v1.layers.separable_conv2d(x, 3, 3)
        ''')
    assert new.splitlines()[:6] == [
        "import common", "import common.tf1.layers", "import common.tf1.metrics", "import tensorflow as tf",
        "net = common.tf1.layers.dense(common.tf1.layers.flatten(x), 10)",
        'ops = {"acc": common.tf1.metrics.accuracy(y, p), "auc": common.tf1.metrics.auc(y, p)}']
    assert new.splitlines()[6] == "keras_metric = tf.metrics.Accuracy()"
    assert [c.line for c in changes if c.refused] == [5]


def test_the_collections_are_left_as_written_and_trainable_variables_lists_the_models():
    new, changes = upgrade('''\
        import tensorflow as tf
        loss += decay * tf.add_n([tf.nn.l2_loss(v) for v in tf.compat.v1.trainable_variables()])
        old = tf.trainable_variables()
        loss += tf.compat.v1.losses.get_regularization_loss()
        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        decay = tf.add_n(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES))
        ''')
    assert new.splitlines() == [  # each call of model_fn has a fresh TF1 graph's collections
        "import common", "import common.tf1.variables", "import tensorflow as tf",
        "loss += decay * tf.add_n([tf.nn.l2_loss(v) for v in common.tf1.variables.trainable_variables()])",
        "old = common.tf1.variables.trainable_variables()",
        "loss += tf.compat.v1.losses.get_regularization_loss()",
        "update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)",
        "decay = tf.add_n(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES))"]
    assert not [c for c in changes if c.refused]


def test_tf1_logging_verbosity_reaches_the_projects_log_lines():
    new, _ = upgrade('''\
        import tensorflow as tf
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
        tf.logging._logger.setLevel(tf.logging.INFO)
        ''')
    assert new.splitlines()[2:4] == ["common.set_verbosity(tf.compat.v1.logging.INFO)",
                                     "tf.get_logger().setLevel(tf.compat.v1.logging.INFO)"]
    imported, _ = upgrade('''\
        from tensorflow.python.platform import tf_logging as logging
        logging.set_verbosity(logging.INFO)
        train_op = tf.contrib.training.create_train_op(loss, optimizer)
        ''')
    assert "common.set_verbosity(logging.INFO)" in imported
    scoped, changes = upgrade('''\
        from tensorflow.python.ops import variable_scope
        total = variable_scope.variable(0.0, collections=[])
        ''')  # (BERT-NER's metrics.py: no `import tensorflow as tf` of its own, so the upgrade adds it)
    assert scoped.splitlines()[:3] == ["import tensorflow as tf", "from tensorflow.python.ops import variable_scope",
                                       "total = tf.compat.v1.Variable(0.0, collections=[])"]
    assert "added import tensorflow as tf" in [c.message for c in changes]
    assert "train_op = common.contrib.slim.training.create_train_op(loss, optimizer)" in imported
    before = absl_logging.get_verbosity()
    try:
        common.set_verbosity(v=logging.INFO)  # (TF1's name for the level)
        assert absl_logging.get_verbosity() == absl_logging.INFO and absl_logging.level_info()
        common.set_verbosity(logging.WARNING)
        assert not absl_logging.level_info()
    finally:
        absl_logging.set_verbosity(before)


def test_scalar_summaries_become_spec_scalars_and_the_other_tf1_summaries_are_left_as_written():
    new, changes = upgrade('''\
        import tensorflow as tf
        tf.compat.v1.summary.scalar("lr", lr)
        tf.summary.scalar("loss", loss)
        tf.compat.v1.summary.histogram("w", w)
        ''')
    assert new.splitlines()[3:6] == ['common.tf1.summary.scalar("lr", lr)', 'common.tf1.summary.scalar("loss", loss)',
                                     'tf.compat.v1.summary.histogram("w", w)']
    assert not [c for c in changes if c.refused]


def test_session_run_hooks_become_common_tf1s():
    new, changes = upgrade('''\
        import tensorflow as tf
        class Hook(tf.estimator.SessionRunHook):
            def before_run(self, run_context):
                return tf.estimator.SessionRunArgs(tf.compat.v1.train.get_global_step())
        class Saver(tf.estimator.CheckpointSaverListener):
            pass
        feeder = tf.train.FeedFnHook(lambda: {"x:0": [1]})
        ''')
    assert "class Hook(common.adapters.session_run_hooks.SessionRunHook):" in new
    assert "feeder = common.adapters.session_run_hooks.FeedFnHook(lambda" in new
    assert "return common.adapters.session_run_hooks.SessionRunArgs(common.get_global_step())" in new
    assert "class Saver(common.adapters.session_run_hooks.CheckpointSaverListener):" in new
    assert "import common.adapters.session_run_hooks" in new and not any(c.refused for c in changes)


def test_exporters_and_early_stopping_hooks_become_the_projects():
    new, changes = upgrade('''\
        import tensorflow as tf
        best = tf.estimator.BestExporter(serving_input_receiver_fn=receiver, exports_to_keep=3)
        stop = tf.estimator.experimental.stop_if_no_decrease_hook(estimator, "loss", 1000)
        spec = tf.estimator.EvalSpec(input_fn, exporters=[best, tf.estimator.FinalExporter("final", receiver)])
        odd = tf.estimator.experimental.InMemoryEvaluatorHook(estimator, input_fn)
        clipped = tf.contrib.estimator.clip_gradients_by_norm(optimizer, 5.0)
        ''')
    assert new.splitlines() == [
        "import common", "import common.early_stopping", "import common.training.in_memory_evaluator",
        "import tensorflow as tf",
        "best = common.BestExporter(serving_input_receiver_fn=receiver, exports_to_keep=3)",
        'stop = common.early_stopping.stop_if_no_decrease_hook(estimator, "loss", 1000)',
        'spec = common.EvalSpec(input_fn, exporters=[best, common.FinalExporter("final", receiver)])',
        "odd = common.training.in_memory_evaluator.InMemoryEvaluatorHook(estimator, input_fn)",
        "clipped = common.clip_gradients_by_norm(optimizer, 5.0)"]
    assert not [c for c in changes if c.refused]


def test_names_reached_through_import_aliases_are_rewritten_as_their_canonical_names():
    new, changes = upgrade('''\
        import tensorflow.compat.v1 as tf
        import tensorflow.compat.v1 as tf_compat
        from tensorflow import estimator as tf_estimator
        from tensorflow.compat.v1 import estimator as v1_estimator, flags
        from tensorflow.python.estimator.model_fn import ModeKeys as Modes
        opt = tf.train.AdamOptimizer(0.1)
        step = tf_compat.train.get_global_step()
        est = tf_estimator.Estimator(model_fn)
        spec = v1_estimator.EstimatorSpec(flags.FLAGS.mode)
        w = tf.get_variable("w", [1])
        mode = Modes.TRAIN
        ''')
    lines = new.splitlines()
    assert "from common import ModeKeys as Modes" in lines
    assert "# from tensorflow import estimator as tf_estimator" in lines  # TensorFlow 2.21 has none
    assert "from tensorflow.compat.v1 import flags" in lines  # (the TPU models' tf.compat.v1 estimator: gone too)
    assert "spec = common.EstimatorSpec(flags.FLAGS.mode)" in lines
    assert "opt = common.tf1.train.AdamOptimizer(0.1)" in lines
    assert "step = common.get_global_step()" in lines
    assert "est = common.Estimator(model_fn)" in lines
    assert 'w = tf.get_variable("w", [1])' in lines  # tf here is tf.compat.v1: it has get_variable
    assert not [c for c in changes if c.refused]


def test_a_tf1_originals_top_level_names_move_to_compat_v1_and_names_tf_lacks_are_refused():
    new, changes = upgrade('''\
        import tensorflow as tf
        flags = tf.flags
        tf.logging.info("x")
        with tf.gfile.GFile("f") as f:
            row = tf.decode_csv(f.read(), [[0]])
        it = tf.data.TextLineDataset("f").map(parse).make_one_shot_iterator()
        x = tf.no_such_function(1)
        ''')
    assert new.startswith("import common\nimport common.adapters.tensor_inputs\nimport tensorflow as tf\n")
    lines = new.splitlines()[2:]
    assert lines[1] == "flags = tf.compat.v1.flags"
    assert lines[2] == 'tf.compat.v1.logging.info("x")'
    assert lines[3] == 'with tf.compat.v1.gfile.GFile("f") as f:'
    assert lines[4] == "    row = tf.compat.v1.decode_csv(f.read(), [[0]])"
    assert lines[5] == ('it = common.adapters.tensor_inputs.make_one_shot_iterator('
                        'tf.compat.v1.data.TextLineDataset("f").map(parse))')
    refused = [c for c in changes if c.refused]
    assert [(c.line, c.message) for c in refused] == [
        (7, "tf.no_such_function: the installed TensorFlow has no tf.no_such_function and the upgrade knows no "
            "counterpart of it")]


def test_in_a_tf1_original_a_name_whose_tf1_meaning_changed_moves_too_and_elsewhere_stays():
    tf1 = '''\
        import tensorflow as tf
        w = tf.get_variable("w", [2])
        y = tf.nn.dropout(tf.nn.relu(w), 0.9)
        s = tf.reduce_sum(y, keep_dims=True)
        '''
    new, _ = upgrade(tf1)
    assert new.splitlines()[2:] == ['y = tf.compat.v1.nn.dropout(tf.nn.relu(w), 0.9)',  # keep_prob, as TF1 read it
                                    's = tf.compat.v1.reduce_sum(y, keep_dims=True)']
    tf2, _ = upgrade(tf1.replace("tf.get_variable", "tf.compat.v1.get_variable"))
    assert tf2.splitlines()[2:] == ['y = tf.nn.dropout(tf.nn.relu(w), 0.9)', 's = tf.reduce_sum(y, keep_dims=True)']


def test_an_estimator_import_with_no_counterpart_is_refused_and_left():
    new, changes = upgrade('''\
        from tensorflow.python.estimator.canned import head as head_lib
        ''')
    assert new.startswith("from tensorflow.python.estimator.canned import head as head_lib")
    assert [c.message for c in changes if c.refused] == [
        "from tensorflow.python.estimator.canned import head: this project has no counterpart of it"]


def test_tpu_estimator_names_become_common_tpus():
    new, changes = upgrade('''\
        import tensorflow as tf
        config = tf.contrib.tpu.RunConfig(tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=10))
        est = tf.compat.v1.estimator.tpu.TPUEstimator(model_fn, config=config, use_tpu=False)
        opt = tf.compat.v1.tpu.CrossShardOptimizer(opt)
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=None)
        ''')
    assert "config = common.tpu.run_config.RunConfig(tpu_config=common.tpu.run_config.TPUConfig(" in new
    # (TensorFlow 2.21's resolver raises "Please provide a TPU Name to connect to." when built without a TPU)
    assert "resolver = common.tpu.run_config.TPUClusterResolver(tpu=None)" in new
    assert "est = common.tpu.estimator.TPUEstimator(model_fn, config=config, use_tpu=False)" in new
    assert "opt = common.tpu.estimator.CrossShardOptimizer(opt)" in new
    assert "import common.tpu.estimator\nimport common.tpu.run_config\n" in new
    assert not [c for c in changes if c.refused]


def test_tf_compat_v1_spelled_out_under_a_compat_v1_alias_is_read_as_tf_compat_v1():
    new, changes = upgrade('''\
        import tensorflow.compat.v1 as tf
        mean = tf.compat.v1.metrics.mean(x)
        opt = tf.train.AdamOptimizer(0.1)
        ''')
    assert "mean = common.tf1.metrics.mean(x)" in new and "opt = common.tf1.train.AdamOptimizer(0.1)" in new


def test_tf_summary_image_is_tf2s_in_a_tf2_file_and_tf1s_in_a_tf1_original():
    tf2, _ = upgrade('''\
        import tensorflow as tf
        tf.summary.image("x", images, step=1)
        ''')
    assert "common.tf1.summary.image_v2(\"x\", images, step=1)" in tf2
    tf1, _ = upgrade('''\
        import tensorflow as tf
        w = tf.get_variable("w", [1])
        tf.summary.image("x", images, 2)
        ''')
    assert "tf.compat.v1.summary.image(\"x\", images, 2)" in tf1  # TF1's third argument: max_outputs


def test_imports_of_tensorflow_contrib_are_taken_out_and_their_uses_rewritten_or_refused():
    new, changes = upgrade('''\
        import tensorflow.compat.v1 as tf
        from tensorflow.contrib import (tpu as contrib_tpu,
                                        layers as contrib_layers)
        import tensorflow.contrib.tensorrt as trt
        try:
            from tensorflow.contrib import cluster_resolver
        except ImportError:
            raise
        est = contrib_tpu.TPUEstimator(model_fn=f, use_tpu=False)
        h = contrib_layers.layer_norm(x)
        n = trt.create_inference_graph(x)
        ''')
    body = new.splitlines()[-10:]
    assert body == ["# from tensorflow.contrib import (tpu as contrib_tpu,",
                    "#                                 layers as contrib_layers)",
                    # (trt.create_inference_graph: none)
                    "trt = common.contrib.gone.Gone('tensorflow.contrib.tensorrt')",
                    "try:",
                    '    raise ImportError("TensorFlow 2.21 has no such module")',  # as on TF 2
                    "except ImportError:",
                    "    raise",
                    "est = common.tpu.estimator.TPUEstimator(model_fn=f, use_tpu=False)",
                    "h = common.contrib.layers.layer_norm(x)",
                    "n = trt.create_inference_graph(x)"]
    compile(new, "upgraded", "exec")
    with pytest.raises(NotImplementedError, match="tensorflow.contrib.tensorrt.create_inference_graph: TensorFlow "
                                                  "2.21 has no such thing"):
        exec(new.split("try:")[0] + "n = trt.create_inference_graph(1)", {})  # (where the use runs, not before)
    assert [c.message for c in changes if c.refused] == [
        "replaced this import of tensorflow.contrib, tf.estimator or tensorflow.examples: trt it binds still have "
        "uses with no counterpart here (the ERROR lines), which fail where they run, saying what is missing",
        "trt.create_inference_graph: tf.contrib is gone since TensorFlow 2.0; find the op in core TensorFlow or Keras"]
    assert sum("removed the import of tensorflow.contrib" in c.message for c in changes) == 2


def test_tf_estimators_implementation_modules_imported_stand_for_tf_estimator():
    new, changes = upgrade('''\
        import tensorflow.compat.v1 as tf
        from tensorflow.python.estimator import estimator
        from tensorflow.python.estimator import model_fn as model_fn_lib, export
        spec = model_fn_lib.EstimatorSpec(model_fn_lib.ModeKeys.TRAIN, loss=x)
        start = estimator._load_global_step_from_checkpoint_dir(model_dir)
        receiver = export.ServingInputReceiver(features, features)
        tf.keras.backend.set_learning_phase(True)
        ''')
    assert new.splitlines()[-6:] == [
        "# from tensorflow.python.estimator import estimator",
        "# from tensorflow.python.estimator import model_fn as model_fn_lib, export",
        "spec = common.EstimatorSpec(common.ModeKeys.TRAIN, loss=x)",
        "start = common.state.checkpoints.global_step_in(model_dir)",
        "receiver = common.ServingInputReceiver(features, features)",
        "common.tf1.keras_backend.set_learning_phase(True)"]
    assert not [c for c in changes if c.refused]


def test_contrib_layers_reached_through_its_implementation_modules_is_contrib_layers():
    new, changes = upgrade('''\
        import tensorflow as tf
        from tensorflow.contrib.layers.python.layers import layers
        from tensorflow.contrib.layers.python.layers import initializers as inits
        from tensorflow.contrib import layers as contrib_layers
        net = layers.batch_norm(layers.fully_connected(x, 4, weights_initializer=inits.xavier_initializer()))
        kernel = contrib_layers.xavier_initializer_conv2d()
        he = contrib_layers.variance_scaling_initializer(2.0, "FAN_OUT")
        ''')
    assert new.splitlines()[-3:] == [
        "net = common.contrib.layers.batch_norm(common.contrib.layers.fully_connected(x, 4, "
        "weights_initializer=common.contrib.layers.xavier_initializer()))",
        "kernel = common.contrib.layers.xavier_initializer_conv2d()",
        'he = common.contrib.layers.variance_scaling_initializer(2.0, "FAN_OUT")']
    assert not [c for c in changes if c.refused]


def test_taking_out_a_contrib_import_keeps_every_other_statement_and_name_and_a_failed_imports_fallback():
    new, changes = upgrade('''\
        import tensorflow as tf
        import tensorflow.contrib.slim as slim; x = 1
        import numpy as np, tensorflow.contrib.slim as slim2
        from tensorflow import contrib, keras
        def f():
            from tensorflow.contrib import layers as L; return 2
        try:
            import tensorflow.contrib.tensorrt as trt
            HAS_TRT = True
        except ImportError:
            HAS_TRT = False
        init = contrib.layers.xavier_initializer()
        ''')
    assert new.splitlines()[-11:] == [
        "pass; x = 1",
        "import numpy as np",
        "from tensorflow import keras",
        "def f():",
        "    pass; return 2",
        "try:",
        '    raise ImportError("TensorFlow 2.21 has no such module")',
        "    HAS_TRT = True",
        "except ImportError:",
        "    HAS_TRT = False",
        "init = common.contrib.layers.xavier_initializer()"]
    namespace = {}
    exec(compile(new, "upgraded", "exec"), namespace)
    assert namespace["x"] == 1 and namespace["f"]() == 2 and namespace["HAS_TRT"] is False
    assert sum("removed the import of tensorflow.contrib" in c.message for c in changes) == 5


def test_tf_estimator_inputs_mark_a_tf1_original_whose_premade_estimators_are_tf1s_however_imported():
    new, changes = upgrade('''\
        import tensorflow as tf
        from tensorflow import estimator
        from tensorflow.estimator import LinearRegressor
        a = tf.estimator.DNNClassifier([3], cols)
        b = estimator.DNNRegressor([3], cols)
        c = LinearRegressor(cols)
        i = tf.estimator.inputs.numpy_input_fn(x, y, shuffle=True)
        ''')
    assert "from common.canned.v1 import LinearRegressor" in new.splitlines()
    assert new.splitlines()[-4:] == ["a = common.canned.v1.DNNClassifier([3], cols)",
                                     "b = common.canned.v1.DNNRegressor([3], cols)", "c = LinearRegressor(cols)",
                                     "i = common.estimator.inputs.numpy_input_fn(x, y, shuffle=True)"]
    assert not any(c.refused for c in changes)
    tf2_era, _ = upgrade('''\
        import tensorflow as tf
        a = tf.estimator.DNNClassifier([3], cols)
        ''')
    assert tf2_era.splitlines()[-1] == "a = common.canned.DNNClassifier([3], cols)"  # TF 2's, where nothing says TF1


def test_tf1_contribs_pieces_with_a_home_recurrent_cells_and_private_column_classes_are_mapped():
    new, changes = upgrade('''\
        import tensorflow as tf
        from tensorflow.python.feature_column import feature_column
        from tensorflow.python.keras import models
        from tensorflow.python.keras.layers import Dense as D


        def model_fn(features, labels, mode, params):
            ids = tf.contrib.layers.embed_sequence(features["ids"], vocab_size=10, embed_dim=params.size)
            cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(4), tf.contrib.rnn.GRUCell(3)])
            outputs, _ = tf.nn.static_rnn(cell, tf.unstack(ids, axis=1), dtype=tf.float32)
            return outputs


        hparams = tf.contrib.training.HParams(size=4)
        numeric = [c for c in columns if isinstance(c, feature_column._NumericColumn)]
        predict = tf.contrib.predictor.from_saved_model("export", signature_def_key="predict")
        ''')
    assert not [c for c in changes if c.refused]
    for expected in ('common.contrib.layers.embed_sequence(features["ids"]',
                     "common.contrib.rnn_cell.MultiRNNCell([common.contrib.rnn_cell.LSTMCell(4), "
                     "common.contrib.rnn_cell.GRUCell(3)])",
                     "tf.compat.v1.nn.static_rnn(cell", "common.contrib.hparams.HParams(size=4)",
                     "isinstance(c, common.tf1.feature_column.NumericColumn)",
                     'common.contrib.predictor.from_saved_model("export"',
                     "from tensorflow.keras import models", "from tensorflow.keras.layers import Dense as D",
                     "import common.contrib.rnn_cell", "import common.contrib.hparams"):
        assert expected in new, expected
    assert any("not tensorflow.python.keras" in c.message for c in changes)


def test_contrib_learn_and_data_map_onto_their_tf_2_homes():
    new, changes = upgrade('''\
        import tensorflow as tf
        from tensorflow.contrib.learn.python.learn import learn_runner


        def experiment_fn(run_config, hparams):
            dataset = tf.contrib.data.TFRecordDataset(["a"]).prefetch(tf.contrib.data.AUTOTUNE)
            dataset = dataset.apply(tf.contrib.data.batch_and_drop_remainder(4))
            net = tf.contrib.layers.batch_norm(dataset, is_training=True)
            return tf.contrib.learn.Experiment(None, None, None)


        learn_runner.run(experiment_fn, run_config=tf.contrib.learn.RunConfig(model_dir="m"), hparams=None)
        ''')
    assert not [c for c in changes if c.refused]
    for expected in ('tf.data.TFRecordDataset(["a"]).prefetch(tf.data.experimental.AUTOTUNE)',
                     "common.contrib.layers.batch_and_drop_remainder(4)", "common.contrib.layers.batch_norm(dataset",
                     "common.contrib.learn.Experiment(None", "common.contrib.learn.run(experiment_fn",
                     'common.contrib.learn.RunConfig(model_dir="m")'):
        assert expected in new, expected


def test_tf1_tutorials_mnist_reader_and_contrib_learns_datasets_map_however_they_are_imported():
    new, changes = upgrade('''\
        import numpy as np
        import tensorflow as tf
        from tensorflow.contrib import learn
        from tensorflow.examples.tutorials.mnist import input_data
        from tensorflow.contrib.learn.python.learn.datasets import base

        mnist = input_data.read_data_sets("MNIST_data/", one_hot=True)
        layers_tutorial = tf.contrib.learn.datasets.load_dataset("mnist")
        iris = base.load_csv_with_header("iris.csv", target_dtype=np.int32, features_dtype=np.float32)
        more = learn.datasets.mnist.read_data_sets("MNIST-data")
        ''')
    assert not [c for c in changes if c.refused]
    compile(new, "upgraded", "exec")
    for expected in ("# from tensorflow.examples.tutorials.mnist import input_data",
                     "# from tensorflow.contrib.learn.python.learn.datasets import base",
                     'mnist = common.contrib.learn_datasets.read_data_sets("MNIST_data/", one_hot=True)',
                     'common.contrib.learn_datasets.load_dataset("mnist")',
                     'common.contrib.learn_datasets.load_csv_with_header("iris.csv"',
                     'common.contrib.learn_datasets.read_data_sets("MNIST-data")'):
        assert expected in new, expected


def test_added_imports_come_before_a_top_level_use_that_precedes_the_tensorflow_import():
    new, _ = upgrade('''\
        """Reads MNIST first, as tutorials copied from one popular repository did."""
        from __future__ import print_function

        # Import MNIST data
        from tensorflow.examples.tutorials.mnist import input_data
        mnist = input_data.read_data_sets("/tmp/data/", one_hot=False)

        import tensorflow as tf
        ''')
    assert new == textwrap.dedent('''\
        """Reads MNIST first, as tutorials copied from one popular repository did."""
        from __future__ import print_function

        # Import MNIST data
        # from tensorflow.examples.tutorials.mnist import input_data
        import common
        import common.contrib.learn_datasets
        mnist = common.contrib.learn_datasets.read_data_sets("/tmp/data/", one_hot=False)

        import tensorflow as tf
        ''')


def test_contrib_learns_own_estimator_and_contribs_losses_map_as_tensorflows_tutorials_used_them():
    new, changes = upgrade('''\
        import numpy as np
        import tensorflow as tf
        from tensorflow.contrib import learn


        def model_fn(features, targets, mode, params):
            hidden = tf.contrib.layers.relu(features, 10)
            predictions = tf.reshape(tf.contrib.layers.linear(hidden, 1), [-1])
            loss = tf.contrib.losses.mean_squared_error(predictions, targets)
            metrics = {"mae": tf.contrib.metrics.streaming_mean_absolute_error(predictions, targets)}
            return learn.ModelFnOps(mode, predictions={"ages": predictions}, loss=loss, eval_metric_ops=metrics)


        nn = tf.contrib.learn.Estimator(model_fn=model_fn, params={"learning_rate": 0.001})
        model = learn.SKCompat(learn.Estimator(model_fn=model_fn))
        columns = [tf.contrib.layers.real_valued_column("", dimension=4)]
        classifier = tf.contrib.learn.DNNClassifier(feature_columns=columns, hidden_units=[10], n_classes=3)
        ''')
    assert not [c for c in changes if c.refused]
    for expected in ("hidden = common.contrib.layers.relu(features, 10)",
                     "common.contrib.losses.mean_squared_error(predictions, targets)",
                     "common.contrib.metrics.streaming_mean_absolute_error(predictions, targets)",
                     "return common.contrib.learn.ModelFnOps(mode", "nn = common.contrib.learn.Estimator(",
                     "model = common.contrib.learn.SKCompat(common.contrib.learn.Estimator(",
                     'columns = [common.contrib.columns.real_valued_column("", dimension=4)]',
                     "classifier = common.contrib.learn_canned.DNNClassifier(feature_columns=columns"):
        assert expected in new, expected


def test_the_official_examples_device_setter_and_tower_stacking_names_map():
    new, changes = upgrade('''\
        import tensorflow as tf
        from tensorflow.python.framework import device as pydev
        from tensorflow.python.training import basic_session_run_hooks, session_run_hook, training_util

        spec = pydev.DeviceSpec.from_string("/cpu:0")
        shard = tf.parallel_stack([a, b])
        balance = tf.contrib.training.GreedyLoadBalancingStrategy(2, tf.contrib.training.byte_size_load_fn)
        step = training_util.get_global_step()
        args = basic_session_run_hooks.SessionRunArgs(step)
        ''')
    assert not [c for c in changes if c.refused]
    for expected in ('tf.compat.v1.DeviceSpec.from_string("/cpu:0")', "tf.stack([a, b])",
                     "common.contrib.layers.GreedyLoadBalancingStrategy(2, common.contrib.layers.byte_size_load_fn)",
                     "step = common.get_global_step()", "common.adapters.session_run_hooks.SessionRunArgs(step)"):
        assert expected in new, expected


def test_contrib_estimator_heads_early_stopping_lookup_tables_and_learn_mode_keys_map():
    new, changes = upgrade('''\
        import tensorflow as tf

        head = tf.contrib.estimator.binary_classification_head(weight_column="w")
        reg = tf.contrib.estimator.regression_head("w", label_dimension=2)
        hook = tf.contrib.estimator.stop_if_no_increase_hook(est, "f1", 100)
        table = tf.contrib.lookup.HashTable(tf.contrib.lookup.KeyValueTensorInitializer(k, v), -1)
        words = tf.contrib.lookup.index_to_string_table_from_file("vocab.txt")
        infer = mode == tf.contrib.learn.ModeKeys.INFER
        train = tf.contrib.layers.optimize_loss(loss, step, 0.1, "Adam")
        net = tf.contrib.layers.conv2d(images, 32, 5)
        cell = tf.contrib.rnn.LSTMBlockCell(8)
        ''')
    assert not [c for c in changes if c.refused]
    for expected in ('common.canned.BinaryClassHead(weight_column="w")',
                     'common.canned.heads.regression_head("w", label_dimension=2)',
                     'common.early_stopping.stop_if_no_increase_hook(est, "f1", 100)',
                     "tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(k, v), -1)",
                     'common.contrib.layers.index_to_string_table_from_file("vocab.txt")',
                     "mode == common.contrib.learn.ModeKeys.INFER",
                     'common.contrib.layers.optimize_loss(loss, step, 0.1, "Adam")',
                     "common.contrib.layers.conv2d(images, 32, 5)", "common.contrib.rnn_cell.LSTMBlockCell(8)"):
        assert expected in new, expected
    assert common.canned.heads.regression_head("w", 2).logits_dimension == 2


def test_contribs_fused_lstm_and_crf_map_however_they_are_imported():
    new, changes = upgrade('''\
        import tensorflow as tf
        from tensorflow.contrib import crf
        from tensorflow.contrib.crf import crf_decode

        fw = tf.contrib.rnn.LSTMBlockFusedCell(8)
        bw = tf.contrib.rnn.TimeReversedFusedRNN(tf.contrib.rnn.LSTMBlockFusedCell(8))
        ll, params = tf.contrib.crf.crf_log_likelihood(logits, tags, lengths)
        tags, _ = crf_decode(logits, params, lengths)
        best = crf.viterbi_decode(scores, params)
        ''')
    assert not [c for c in changes if c.refused]
    for expected in ("common.contrib.rnn_cell.LSTMBlockFusedCell(8)",
                     "common.contrib.rnn_cell.TimeReversedFusedRNN(common.contrib.rnn_cell.LSTMBlockFusedCell(8))",
                     "common.contrib.crf.crf_log_likelihood(logits, tags, lengths)",
                     "common.contrib.crf.crf_decode(logits, params, lengths)",
                     "common.contrib.crf.viterbi_decode(scores, params)"):
        assert expected in new, expected
    assert not [line for line in new.splitlines()  # (no tf.contrib left; this project's common.contrib is fine)
                if "contrib" in line.replace("common.contrib", "") and not line.startswith("# ")]


def test_a_contrib_module_bound_to_a_name_is_read_through_it():
    new, changes = upgrade('''\
        import tensorflow as tf

        layers = tf.contrib.layers


        def model(x):
            net = layers.conv2d(x, 8, 3)
            return layers.fully_connected(layers.flatten(net), 2, activation_fn=None)


        def shadowed(layers):
            return layers.conv2d
        ''')
    assert not [c for c in changes if c.refused]
    assert "layers = common.contrib.layers\n" in new
    assert "net = common.contrib.layers.conv2d(x, 8, 3)" in new
    assert "common.contrib.layers.fully_connected(common.contrib.layers.flatten(net), 2, activation_fn=None)" in new
    assert "def shadowed(layers):\n    return layers.conv2d" in new  # a parameter of that name is the caller's
    import common.contrib.layers
    assert callable(common.contrib.layers.conv2d)


def test_contrib_slim_however_imported_maps_onto_the_tf_slim_package_through_common_tf1_slim():
    new, changes = upgrade('''\
        import tensorflow as tf
        import tensorflow.contrib.slim as slim
        from tensorflow.contrib import slim as slim2
        from tensorflow.contrib.slim import nets
        from tensorflow.contrib.slim.nets import resnet_v1
        from tensorflow.contrib.slim.python.slim.nets import vgg

        layers = tf.contrib.slim
        with slim.arg_scope([slim.conv2d], activation_fn=None):
            net = slim2.conv2d(x, 8, [3, 3], scope="conv1")
        with slim.arg_scope(nets.resnet_v1.resnet_arg_scope()):
            logits, _ = resnet_v1.resnet_v1_50(net, num_classes=3, is_training=True)
        train_op = tf.contrib.slim.learning.create_train_op(loss, opt)
        v = vgg.vgg_16(x) + layers.flatten(x)
        ''')
    assert not [c for c in changes if c.refused]
    assert "import common.contrib.slim\n" in new and "import common.contrib.slim.nets" not in new
    assert new.splitlines()[-7:] == [
        "layers = common.contrib.slim",
        "with common.contrib.slim.arg_scope([common.contrib.slim.conv2d], activation_fn=None):",
        '    net = common.contrib.slim.conv2d(x, 8, [3, 3], scope="conv1")',
        "with common.contrib.slim.arg_scope(common.contrib.slim.nets.resnet_v1.resnet_arg_scope()):",
        "    logits, _ = common.contrib.slim.nets.resnet_v1.resnet_v1_50(net, num_classes=3, is_training=True)",
        "train_op = common.contrib.slim.learning.create_train_op(loss, opt)",
        "v = common.contrib.slim.nets.vgg.vgg_16(x) + common.contrib.slim.flatten(x)"]
    assert sum("removed the import of tensorflow.contrib" in c.message for c in changes) == 5


def test_a_file_importing_tf_slim_itself_imports_common_tf1_slim_which_mends_it():
    new, changes = upgrade('''\
        import tensorflow as tf
        import tf_slim as slim
        net = slim.batch_norm(x, is_training=True)
        ''')
    assert new.splitlines()[:4] == ["import common", "import common.contrib.slim", "import tensorflow as tf",
                                    "import tf_slim as slim"]
    assert [c.message for c in changes] == ["added import common", "added import common.contrib.slim"]


def test_import_meta_graph_is_read_through_the_project_which_names_its_graphless_meta_files():
    source, _ = upgrade_rules.upgrade_source("saver = tf.train.import_meta_graph(path + '.meta')\n")
    assert "common.tf1.saver.import_meta_graph(path + '.meta')" in source


def test_contrib_framework_and_training_names_slim_reexported_map_onto_their_homes():
    """tensorflow/tpu's slim MobileNet (2018) imported arg_scope from contrib.framework and iterated
    checkpoints with contrib.training's evaluation module; each has a home in tf_slim or tf.compat.v1."""
    source, _ = upgrade("""
        import tensorflow as tf
        from tensorflow.contrib.framework.python.ops import arg_scope
        from tensorflow.contrib.training.python.training import evaluation
        with arg_scope([f], padding="SAME"):  # (TF1's package re-exported the function under its module's name)
            y = tf.contrib.layers.softmax(x)
        with arg_scope.arg_scope([g]):
            pass
        for path in evaluation.checkpoints_iterator(model_dir):
            init = tf.contrib.framework.assign_from_checkpoint_fn(path, tf.contrib.framework.get_variables_to_restore())
        """)
    assert "with common.contrib.slim.arg_scope([f], padding=\"SAME\"):" in source
    assert "with common.contrib.slim.arg_scope([g]):" in source
    assert "y = common.contrib.slim.softmax(x)" in source
    assert "for path in tf.compat.v1.train.checkpoints_iterator(model_dir):" in source
    assert ("common.contrib.slim.assign_from_checkpoint_fn(path, common.contrib.slim.get_variables_to_restore())"
            in source)
    assert "tf.contrib" not in source.replace("# from tensorflow.contrib", "")


def test_a_function_that_builds_queue_runner_input_is_marked_and_its_factory_and_dataset_batches_are_not():
    new, changes = upgrade('''\
        import tensorflow as tf


        def make_input_fn(pattern, epochs):
            def input_fn():
                files = tf.train.string_input_producer(tf.gfile.Glob(pattern), num_epochs=epochs)
                _, rows = tf.TextLineReader().read_up_to(files, 100)
                return tf.train.shuffle_batch([rows], 10, 100, 20, enqueue_many=True)
            return input_fn


        class Reader:
            @staticmethod
            def batches(queue):
                return tf.train.batch([queue.dequeue()], 4)


        def dataset_input_fn(ds):
            return ds.batch(4)


        def flagged_input_fn(ds, opts):  # (a program's own flag of that name: no queue)
            return ds.shuffle(100) if opts.shuffle_batch else ds
        ''')
    assert new.count("@common.adapters.graph_input.input_fn_in_graph\n") == 2
    assert "    @common.adapters.graph_input.input_fn_in_graph\n    def input_fn():" in new
    assert "    @staticmethod\n    @common.adapters.graph_input.input_fn_in_graph\n    def batches(queue):" in new
    assert "import common.adapters.graph_input\n" in new
    assert len([c for c in changes if "marked a function that builds queue-runner input" in c.message]) == 2
    again, _ = upgrade(new)  # upgrading the upgraded file marks nothing twice
    assert again.count("input_fn_in_graph\n") == 2


def test_contrib_learns_run_config_module_maps_so_its_import_goes():
    """The official CIFAR-10 example's RunConfig subclass read run_config._DEFAULT_UID_WHITE_LIST; unmapped, the
    import of contrib's module was kept and the program stopped there."""
    new, changes = upgrade('''\
        import tensorflow as tf
        from tensorflow.contrib.learn.python.learn import run_config


        class RunConfig(run_config.RunConfig):
            def uid(self, whitelist=None):
                return whitelist or run_config._DEFAULT_UID_WHITE_LIST
        ''')
    assert not [c for c in changes if c.refused]
    assert "class RunConfig(common.contrib.learn.RunConfig):" in new
    assert "return whitelist or common.contrib.learn.DEFAULT_UID_WHITE_LIST" in new
    assert "# from tensorflow.contrib.learn.python.learn import run_config" in new


def test_contribs_distribute_config_and_collective_strategy_run_as_runconfigs_strategies():
    new, changes = upgrade('''\
        import tensorflow as tf
        distribution = tf.contrib.distribute.CollectiveAllReduceStrategy(
            num_gpus_per_worker=0, communication=tf.contrib.distribute.CollectiveCommunication.RING)
        config = tf.estimator.RunConfig(experimental_distribute=tf.contrib.distribute.DistributeConfig(
            train_distribute=distribution, eval_distribute=distribution))
        ''')
    assert not [c for c in changes if c.refused]
    assert "common.devices.strategies.DistributeConfig(" in new
    assert "communication=tf.distribute.experimental.CollectiveCommunication.RING" in new
    namespace = {}
    exec(compile(new, "upgraded.py", "exec"), namespace)
    assert namespace["config"].device_plan.tower_devices == ("/cpu:0",)  # (one worker, no GPU: its CPU)
    assert namespace["config"].train_distribute is namespace["distribution"]


def test_tf1s_ranking_metrics_become_common_tf1_metrics_at_k():
    new, changes = upgrade('''\
        import tensorflow as tf
        ops = {"recall@5": tf.metrics.recall_at_k(labels, logits, 5),
               "map@5": tf.compat.v1.metrics.average_precision_at_k(labels, logits, 5)}
        ''')
    assert not [c for c in changes if c.refused]
    assert '"recall@5": common.tf1.metrics_at_k.recall_at_k(labels, logits, 5)' in new
    assert '"map@5": common.tf1.metrics_at_k.average_precision_at_k(labels, logits, 5)' in new


def test_keras_input_becomes_the_one_that_takes_a_model_fns_tensor():
    new, changes = upgrade('''\
        import tensorflow as tf
        net = tf.keras.layers.Input(tensor=embeddings)
        x = tf.keras.Input(shape=(3,))
        ''')
    assert not [c for c in changes if c.refused]
    assert "net = common.tf1.keras_input.Input(tensor=embeddings)" in new
    assert "x = common.tf1.keras_input.Input(shape=(3,))" in new


def test_tf1s_tpu_modules_become_common_tpus_and_a_keyword_named_like_one_is_left_alone():
    """tensorflow/tpu's models imported TF 1.x's modules; `tpu_config=` is then both a module and a keyword."""
    new, changes = upgrade('''\
        from tensorflow.contrib.tpu.python.tpu import tpu_config
        from tensorflow.contrib.tpu.python.tpu import tpu_estimator
        from tensorflow.contrib.tpu.python.tpu import tpu_optimizer
        config = tpu_config.RunConfig(master="", tpu_config=tpu_config.TPUConfig(iterations_per_loop=2))
        opt = tpu_optimizer.CrossShardOptimizer(opt)
        est = tpu_estimator.TPUEstimator(model_fn=f, use_tpu=False, config=config)
        ''')
    assert not [c.message for c in changes if c.refused]
    assert ('config = common.tpu.run_config.RunConfig(master="", tpu_config=common.tpu.run_config.TPUConfig('
            'iterations_per_loop=2))') in new
    assert "opt = common.tpu.estimator.CrossShardOptimizer(opt)" in new
    assert "est = common.tpu.estimator.TPUEstimator(model_fn=f, use_tpu=False, config=config)" in new
