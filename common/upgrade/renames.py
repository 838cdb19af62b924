"""What each TensorFlow name becomes: the upgrade's tables.

RENAMES maps a canonical name (or a prefix of one) to this project's
counterpart; REMOVED_CALLS are statements that only made sense in a TF1
graph; UNSUPPORTED maps prefixes with no counterpart to what to do instead
(longest prefix wins). The rules (common.upgrade.rules) apply them.
"""

ESTIMATOR_PREFIXES = ("tf.estimator.", "tf.compat.v1.estimator.", "tf.compat.v2.estimator.")
ESTIMATOR_NAMES = ("Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "TrainSpec", "EvalSpec",
                   "train_and_evaluate", "WarmStartSettings", "Exporter", "LatestExporter", "BestExporter",
                   "FinalExporter", "add_metrics")
EXPORT_NAMES = ("ServingInputReceiver", "TensorServingInputReceiver", "build_raw_serving_input_receiver_fn",
                "build_parsing_serving_input_receiver_fn", "PredictOutput", "ClassificationOutput",
                "RegressionOutput")
HOOK_NAMES = ("LoggingTensorHook", "StopAtStepHook", "CheckpointSaverHook", "SummarySaverHook", "NanTensorHook",
              "StepCounterHook", "ProfilerHook", "NanLossDuringTrainingError")
EARLY_STOPPING_NAMES = ("stop_if_higher_hook", "stop_if_lower_hook", "stop_if_no_increase_hook",
                        "stop_if_no_decrease_hook", "make_early_stopping_hook", "read_eval_metrics")
TF1_TRAIN_PREFIXES = ("tf.compat.v1.train.", "tf.train.")
TF1_TRAIN_NAMES = ("Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
                   "AdagradOptimizer", "RMSPropOptimizer", "FtrlOptimizer", "ProximalAdagradOptimizer",
                   "ProximalGradientDescentOptimizer", "AdadeltaOptimizer", "AdagradDAOptimizer", "Scaffold",
                   "init_from_checkpoint")
SESSION_RUN_NAMES = ("SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues",
                     "CheckpointSaverListener", "FeedFnHook")
TF1_LAYERS = ("dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose", "batch_normalization", "dropout",
              "flatten", "max_pooling1d", "max_pooling2d", "max_pooling3d", "average_pooling1d", "average_pooling2d",
              "average_pooling3d", "Layer", "Dense", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose",
              "BatchNormalization", "Dropout", "Flatten", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D",
              "AveragePooling1D", "AveragePooling2D", "AveragePooling3D")
TF1_METRICS = ("accuracy", "mean", "precision", "recall", "auc", "mean_squared_error", "root_mean_squared_error",
               "mean_absolute_error", "true_positives", "false_positives", "true_negatives", "false_negatives")
TF1_METRICS_AT_K = ("precision_at_k", "precision_at_top_k", "sparse_precision_at_k", "recall_at_k", "recall_at_top_k",
                    "average_precision_at_k", "sparse_average_precision_at_k")  # common.tf1.metrics_at_k's
TPU_EMBEDDING_PARAMETERS = ("AdagradParameters", "AdamParameters", "StochasticGradientDescentParameters",
                            "FtrlParameters", "MomentumParameters", "RMSPropParameters",
                            "ProximalAdagradParameters")  # common.tpu.embedding's
REDUCTIONS = {"NONE": '"none"', "SUM": '"sum"', "SUM_OVER_BATCH_SIZE": '"sum_over_batch_size"',
              "AUTO": '"sum_over_batch_size"'}
KERAS_PREFIXES = ("tf.keras.", "keras.", "tf.compat.v1.keras.")
CANNED_NAMES = ("DNNClassifier", "DNNRegressor", "DNNEstimator", "LinearClassifier", "LinearRegressor",
                "LinearEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor",
                "DNNLinearCombinedEstimator", "BaselineClassifier", "BaselineRegressor", "BaselineEstimator",
                "BinaryClassHead", "MultiClassHead", "MultiLabelHead", "RegressionHead", "BoostedTreesClassifier",
                "BoostedTreesRegressor", "BoostedTreesEstimator", "boosted_trees_classifier_train_in_memory",
                "boosted_trees_regressor_train_in_memory")
TF1_DEFAULT_CANNED = ("DNNClassifier", "DNNRegressor", "DNNEstimator", "LinearClassifier", "LinearRegressor",
                      "LinearEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor",
                      "BaselineClassifier", "BaselineRegressor")  # tf.compat.v1.estimator's: other defaults
CONTRIB_NAMES = {"tf.contrib.layers.": ("layer_norm", "xavier_initializer", "l2_regularizer", "embed_sequence",
                                        "flatten", "batch_norm", "fully_connected", "optimize_loss", "conv2d",
                                        "convolution2d", "conv2d_transpose", "convolution2d_transpose",
                                        "max_pool2d", "avg_pool2d", "dropout", "linear", "relu",
                                        "relu6", "stack", "xavier_initializer_conv2d",
                                        "variance_scaling_initializer"),
                 "tf.contrib.lookup.": ("index_table_from_tensor", "index_to_string_table_from_tensor",
                                        "index_table_from_file", "index_to_string_table_from_file")}
CONTRIB_HEADS = {"binary_classification_head": "common.canned.BinaryClassHead",
                 "multi_class_head": "common.canned.MultiClassHead", "multi_label_head": "common.canned.MultiLabelHead",
                 "regression_head": "common.canned.heads.regression_head"}

CONTRIB_PREMADE = ("DNNClassifier", "DNNRegressor", "LinearClassifier", "LinearRegressor",
                   "infer_real_valued_columns_from_input")  # common.contrib.learn_canned's
CONTRIB_COLUMNS = ("real_valued_column", "sparse_column_with_keys", "sparse_column_with_hash_bucket",
                   "sparse_column_with_vocabulary_file", "weighted_sparse_column", "one_hot_column", "embedding_column",
                   "bucketized_column", "crossed_column")  # common.contrib.columns'
CONTRIB_METRICS = tuple("streaming_" + name for name in (
    "accuracy", "precision", "recall", "auc", "mean_squared_error", "root_mean_squared_error", "mean_absolute_error",
    "true_positives", "false_positives", "true_negatives", "false_negatives", "mean", "pearson_correlation")) + (
    "accuracy",)
CONTRIB_LOSSES = ("add_loss", "get_losses", "get_regularization_losses", "get_total_loss", "compute_weighted_loss",
                  "absolute_difference", "mean_squared_error", "mean_pairwise_squared_error", "log_loss",
                  "cosine_distance", "hinge_loss", "sigmoid_cross_entropy", "softmax_cross_entropy",
                  "sparse_softmax_cross_entropy")  # common.contrib.losses' (contrib's argument order)
# tf.contrib modules' names -> (this project's module holding them, the names)
CONTRIB_IMAGE = ("transform", "rotate", "translate", "angles_to_projective_transforms",
                 "translations_to_projective_transforms", "flat_transforms_to_matrices",
                 "matrices_to_flat_transforms", "compose_transforms")  # common.contrib.image's
CONTRIB_HOMES = {"tf.contrib.learn.": ("common.contrib.learn_canned.", CONTRIB_PREMADE),
                 "tf.contrib.layers.": ("common.contrib.columns.", CONTRIB_COLUMNS),
                 "tf.contrib.metrics.": ("common.contrib.metrics.", CONTRIB_METRICS),
                 "tf.contrib.losses.": ("common.contrib.losses.", CONTRIB_LOSSES),
                 "tf.contrib.image.": ("common.contrib.image.", CONTRIB_IMAGE)}
RNN_CELL_NAMES = ("RNNCell", "LayerRNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
                  "DropoutWrapper", "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple")  # common.contrib.rnn_cell's
CRF_NAMES = ("crf_sequence_score", "crf_log_norm", "crf_log_likelihood", "crf_unary_score", "crf_binary_score",
             "crf_decode", "viterbi_decode")  # common.contrib.crf's
CONTRIB_DATA_CORE = ("Dataset", "TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset")
CONTRIB_DATA_EXPERIMENTAL = ("AUTOTUNE", "map_and_batch", "parallel_interleave", "shuffle_and_repeat",
                             "sample_from_datasets", "choose_from_datasets", "ignore_errors", "unbatch",
                             "prefetch_to_device", "bucket_by_sequence_length", "scan", "group_by_window",
                             "rejection_resample", "dense_to_sparse_batch", "make_csv_dataset", "CsvDataset")
# TF1's private feature-column classes -> the class TF 2's column function of that kind returns
TF1_COLUMN_CLASSES = {"_NumericColumn": "NumericColumn", "_BucketizedColumn": "BucketizedColumn",
                      "_EmbeddingColumn": "EmbeddingColumn", "_IndicatorColumn": "IndicatorColumn",
                      "_HashedCategoricalColumn": "HashedCategoricalColumn",
                      "_IdentityCategoricalColumn": "IdentityCategoricalColumn",
                      "_VocabularyListCategoricalColumn": "VocabularyListCategoricalColumn",
                      "_VocabularyFileCategoricalColumn": "VocabularyFileCategoricalColumn",
                      "_CrossedColumn": "CrossedColumn", "_WeightedCategoricalColumn": "WeightedCategoricalColumn",
                      "_SequenceCategoricalColumn": "SequenceCategoricalColumn"}


# tf.contrib.learn.datasets and its modules, and TF1's MNIST tutorial reader: all are common.contrib.learn_datasets.
LEARN_DATASETS_MODULES = tuple(
    prefix + suffix for prefix in ("tf.contrib.learn.datasets", "tf.contrib.learn.python.learn.datasets")
    for suffix in ("", ".base", ".mnist")) + ("tf.examples.tutorials.mnist.input_data",)
LEARN_DATASETS_NAMES = ("Dataset", "Datasets", "DataSet", "DATASETS", "load_dataset", "load_csv_with_header",
                        "load_csv_without_header", "shrink_csv", "load_iris", "load_boston", "maybe_download",
                        "dense_to_one_hot", "extract_images", "extract_labels", "read_data_sets", "load_mnist",
                        "DEFAULT_SOURCE_URL")


def _renames():
    renames = {}
    for prefix in ESTIMATOR_PREFIXES:
        for name in ESTIMATOR_NAMES:
            renames[prefix + name] = "common." + name
        for name in EXPORT_NAMES:
            renames[prefix + "export." + name] = "common." + name
        for name in HOOK_NAMES:
            renames[prefix + name] = "common.hooks." + name
    for prefix in TF1_TRAIN_PREFIXES:
        for name in TF1_TRAIN_NAMES:
            renames[prefix + name] = "common.tf1.train." + name
        renames[prefix + "Saver"] = "common.tf1.saver.Saver"
        renames[prefix + "import_meta_graph"] = "common.tf1.saver.import_meta_graph"
        renames[prefix + "replica_device_setter"] = "common.tf1.device_setter.replica_device_setter"
        for name in ("get_global_step", "get_or_create_global_step"):
            renames[prefix + name] = "common.get_global_step"
        for name in HOOK_NAMES:
            renames[prefix + name] = "common.hooks." + name
    for prefix in ("tf.compat.v1.layers.", "tf.layers."):
        for name in TF1_LAYERS:
            renames[prefix + name] = "common.tf1.layers." + name
    for prefix in ("tf.compat.v1.metrics.", "tf.metrics."):  # (TF2's tf.metrics.Accuracy & co. are Keras classes)
        for name in TF1_METRICS:
            renames[prefix + name] = "common.tf1.metrics." + name
        for name in TF1_METRICS_AT_K:
            renames[prefix + name] = "common.tf1.metrics_at_k." + name
    for prefix in ("tf.compat.v1.summary.", "tf.summary."):
        renames[prefix + "scalar"] = "common.tf1.summary.scalar"
    for kind in ("image", "histogram", "text", "audio"):  # TF2's (name, data, step, ...); a TF1 original's move
        renames["tf.summary." + kind] = f"common.tf1.summary.{kind}_v2"
    for prefix in ESTIMATOR_PREFIXES + TF1_TRAIN_PREFIXES:
        for name in SESSION_RUN_NAMES:
            renames[prefix + name] = "common.adapters.session_run_hooks." + name
    for name in ("tf.compat.v1.logging.set_verbosity", "tf.logging.set_verbosity"):
        renames[name] = "common.set_verbosity"
    for name in ("tf.compat.v1.logging._logger", "tf.logging._logger"):  # (TF1's private logger, which programs set)
        renames[name] = "tf.get_logger()"
    for prefix in ESTIMATOR_PREFIXES:
        for name in CANNED_NAMES:
            tf1 = prefix == "tf.compat.v1.estimator." and name in TF1_DEFAULT_CANNED
            renames[prefix + name] = ("common.canned.v1." if tf1 else "common.canned.") + name
        for name in EARLY_STOPPING_NAMES:
            renames[prefix + "experimental." + name] = "common.early_stopping." + name
        for name in ("numpy_input_fn", "pandas_input_fn"):
            renames[prefix + "inputs." + name] = "common.estimator.inputs." + name
    for name in ("tf.compat.v1.feature_column.shared_embedding_columns", "tf.feature_column.shared_embedding_columns",
                 "tf.feature_column.shared_embeddings"):  # (TensorFlow builds them only in graph mode)
        renames[name] = "common.tf1.feature_column.shared_embedding_columns"
    renames["tf.contrib.estimator.clip_gradients_by_norm"] = "common.clip_gradients_by_norm"
    renames["tf.contrib.estimator.add_metrics"] = "common.add_metrics"
    for name in ("replicate_model_fn", "TowerOptimizer"):
        renames["tf.contrib.estimator." + name] = "common.contrib.replicate." + name
    for prefix in [p + "experimental." for p in ESTIMATOR_PREFIXES] + ["tf.contrib.estimator."]:
        renames[prefix + "InMemoryEvaluatorHook"] = "common.training.in_memory_evaluator.InMemoryEvaluatorHook"
    renames["tf.contrib.estimator.forward_features"] = "common.forward_features"
    renames["tf.contrib.summary.scalar"] = "common.tf1.summary.scalar"  # (name, tensor, family, step): its keywords
    renames["tf.contrib.opt.LazyAdamOptimizer"] = "common.contrib.lazy_adam.LazyAdamOptimizer"
    for name in ("tf.summary.FileWriter", "tf.compat.v1.summary.FileWriter"):
        renames[name] = "common.tf1.file_writer.FileWriter"
    for name in ("tf.compat.v1.trainable_variables", "tf.trainable_variables"):
        renames[name] = "common.tf1.variables.trainable_variables"
    for name in ("tf.compat.v1.train.match_filenames_once", "tf.train.match_filenames_once"):
        renames[name] = "common.adapters.tensor_inputs.match_filenames_once"
    for name in ("tf.compat.v1.data.make_one_shot_iterator", "tf.data.make_one_shot_iterator"):
        renames[name] = "common.adapters.tensor_inputs.make_one_shot_iterator"
    for prefix in ("tf.contrib.framework.", "tf.python.training.training_util.", "tf.compat.v1.train."):
        for name in ("get_global_step", "get_or_create_global_step"):
            renames[prefix + name] = "common.get_global_step"
    for module in ("session_run_hook", "basic_session_run_hooks"):  # (TF1 programs imported them from here)
        for name in SESSION_RUN_NAMES:
            renames[f"tf.python.training.{module}.{name}"] = "common.adapters.session_run_hooks." + name
    for name in HOOK_NAMES:
        renames["tf.python.training.basic_session_run_hooks." + name] = "common.hooks." + name
    for prefix, names in CONTRIB_NAMES.items():
        for name in names:
            renames[prefix + name] = "common.contrib.layers." + name
    for name, now in TF1_COLUMN_CLASSES.items():
        renames["tf.python.feature_column.feature_column." + name] = "common.tf1.feature_column." + now
    renames["tf.contrib.training.HParams"] = "common.contrib.hparams.HParams"
    for name in ("GreedyLoadBalancingStrategy", "byte_size_load_fn"):
        renames["tf.contrib.training." + name] = "common.contrib.layers." + name
    for name in ("tf.parallel_stack", "tf.compat.v1.parallel_stack"):  # (the same stack, copied in parallel)
        renames[name] = "tf.stack"
    renames["tf.python.framework.device.DeviceSpec"] = "tf.compat.v1.DeviceSpec"  # (TF1's, with merge_from)
    renames["tf.python.ops.variable_scope.variable"] = "tf.compat.v1.Variable"  # (TF1's own name for it)
    for name in ("Experiment", "RunConfig", "ModeKeys", "Estimator", "ModelFnOps", "SKCompat"):
        renames["tf.contrib.learn." + name] = "common.contrib.learn." + name
    for module in ("estimator", "model_fn"):  # (where contrib.learn's Estimator, SKCompat and ModelFnOps lived)
        for name in ("Estimator", "ModelFnOps", "SKCompat"):
            renames[f"tf.contrib.learn.python.learn.estimators.{module}.{name}"] = "common.contrib.learn." + name
    for name in EARLY_STOPPING_NAMES:  # (contrib.estimator's before tf.estimator.experimental had them)
        renames["tf.contrib.estimator." + name] = "common.early_stopping." + name
    for contrib, head in CONTRIB_HEADS.items():
        renames["tf.contrib.estimator." + contrib] = head
    for name in ("KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex"):
        renames["tf.contrib.lookup." + name] = "tf.lookup." + name
    renames["tf.contrib.lookup.HashTable"] = "tf.lookup.StaticHashTable"
    for module in ("tf.contrib.learn.python.learn.run_config.", "tf.contrib.learn.python.learn.estimators.run_config."):
        renames[module + "RunConfig"] = "common.contrib.learn.RunConfig"
        renames[module + "_DEFAULT_UID_WHITE_LIST"] = "common.contrib.learn.DEFAULT_UID_WHITE_LIST"
    for module in ("tf.contrib.learn.learn_runner.", "tf.contrib.learn.python.learn.learn_runner."):
        renames[module + "run"] = "common.contrib.learn.run"
    for module in LEARN_DATASETS_MODULES:  # (contrib.learn.datasets, its base and mnist, the MNIST tutorial's reader)
        for name in LEARN_DATASETS_NAMES:
            renames[module + "." + name] = "common.contrib.learn_datasets." + name
    for module in ("tf.contrib.learn.", "tf.contrib.learn.utils.saved_model_export_utils.",
                   "tf.contrib.learn.python.learn.utils.saved_model_export_utils."):
        renames[module + "make_export_strategy"] = "common.contrib.learn.make_export_strategy"
    for module in ("tf.contrib.learn.", "tf.contrib.learn.utils.input_fn_utils.",
                   "tf.contrib.learn.python.learn.utils.input_fn_utils."):
        renames[module + "InputFnOps"] = "common.contrib.learn.InputFnOps"
        renames[module + "build_parsing_serving_input_fn"] = "common.build_parsing_serving_input_receiver_fn"
    renames["tf.contrib.predictor.from_saved_model"] = "common.contrib.predictor.from_saved_model"
    for contrib, (home, names) in CONTRIB_HOMES.items():
        for name in names:
            renames[contrib + name] = home + name
    for module in ("tf.contrib.slim", "tf.contrib.slim.python.slim"):  # (all of it: tf_slim, mended there)
        renames[module] = "common.contrib.slim"
    for name in ("arg_scope", "add_arg_scope", "assign_from_checkpoint_fn", "get_variables_to_restore",
                 "get_model_variables", "get_variables"):  # (tf.contrib.framework's, which slim re-exported)
        renames["tf.contrib.framework." + name] = "common.contrib.slim." + name
    for name in ("arg_scope", "add_arg_scope"):  # (TF1's package re-exported its arg_scope module's functions)
        renames[f"tf.contrib.framework.python.ops.{name}"] = f"common.contrib.slim.{name}"
        renames[f"tf.contrib.framework.python.ops.arg_scope.{name}"] = f"common.contrib.slim.{name}"
    renames["tf.contrib.layers.softmax"] = "common.contrib.slim.softmax"
    for name in ("list_variables", "load_checkpoint", "load_variable"):  # (contrib.framework's, now tf.train's)
        renames["tf.contrib.framework." + name] = "tf.train." + name
    renames["tf.contrib.framework.filter_variables"] = "common.contrib.slim.filter_variables"  # (tf_slim kept it)
    renames["tf.python.pywrap_tensorflow.NewCheckpointReader"] = "tf.compat.v1.train.NewCheckpointReader"
    for module in ("tf.contrib.training.", "tf.contrib.training.python.training.evaluation."):
        renames[module + "checkpoints_iterator"] = "tf.compat.v1.train.checkpoints_iterator"
    for module in ("tf.contrib.training.", "tf.contrib.training.python.training.training."):  # (tf_slim kept it)
        renames[module + "create_train_op"] = "common.contrib.slim.training.create_train_op"
    renames["tf.python.platform.tf_logging.set_verbosity"] = "common.set_verbosity"  # (its module, imported)
    for prefix in ("tf.nn.rnn_cell.", "tf.compat.v1.nn.rnn_cell.", "tf.contrib.rnn."):
        for name in RNN_CELL_NAMES:
            renames[prefix + name] = "common.contrib.rnn_cell." + name
    for name in ("static_rnn", "static_bidirectional_rnn"):
        renames["tf.contrib.rnn." + name] = "tf.compat.v1.nn." + name
    for name in ("stack_bidirectional_dynamic_rnn", "stack_bidirectional_rnn", "LSTMBlockCell", "LSTMBlockFusedCell",
                 "TimeReversedFusedRNN", "FusedRNNCellAdaptor"):
        renames["tf.contrib.rnn." + name] = "common.contrib.rnn_cell." + name
    for name in CRF_NAMES:
        renames["tf.contrib.crf." + name] = "common.contrib.crf." + name
    for name in CONTRIB_DATA_CORE:
        renames["tf.contrib.data." + name] = "tf.data." + name
    for name in CONTRIB_DATA_EXPERIMENTAL:
        renames["tf.contrib.data." + name] = "tf.data.experimental." + name
    renames["tf.contrib.data.Iterator"] = "tf.compat.v1.data.Iterator"
    for name in ("batch_and_drop_remainder", "padded_batch_and_drop_remainder"):
        renames["tf.contrib.data." + name] = "common.contrib.layers." + name
    renames["tf.estimator._load_global_step_from_checkpoint_dir"] = "common.state.checkpoints.global_step_in"
    for prefix in ("tf.keras.backend.", "tf.compat.v1.keras.backend."):
        renames[prefix + "set_learning_phase"] = "common.tf1.keras_backend.set_learning_phase"
    renames["tf.contrib.distribute.OneDeviceStrategy"] = "tf.distribute.OneDeviceStrategy"
    for name in ("MirroredStrategy", "CollectiveAllReduceStrategy", "DistributeConfig"):
        renames["tf.contrib.distribute." + name] = "common.devices.strategies." + name
    renames["tf.contrib.distribute.CollectiveCommunication"] = "tf.distribute.experimental.CollectiveCommunication"
    for name in ("AllReduceCrossDeviceOps", "AllReduceCrossTowerOps"):
        renames["tf.contrib.distribute." + name] = "common.devices.strategies.AllReduceCrossDeviceOps"
    for prefix in ("tf.contrib.", "tf.distribute.", "tf.compat.v1.distribute."):
        # (TF1 and TF 2.15 programs build it whatever --use_tpu says; TensorFlow 2.21's wants a TPU's name)
        renames[prefix + "cluster_resolver.TPUClusterResolver"] = "common.tpu.run_config.TPUClusterResolver"
    for prefix in ("tf.estimator.tpu.", "tf.compat.v1.estimator.tpu.", "tf.contrib.tpu."):
        for name in ("TPUEstimator", "TPUEstimatorSpec", "CrossShardOptimizer"):
            renames[prefix + name] = "common.tpu.estimator." + name
        for name in ("RunConfig", "TPUConfig", "InputPipelineConfig"):
            renames[prefix + name] = "common.tpu.run_config." + name
    for prefix in ("tf.estimator.tpu.experimental.", "tf.compat.v1.estimator.tpu.experimental."):
        renames[prefix + "EmbeddingConfigSpec"] = "common.tpu.embedding.EmbeddingConfigSpec"
    for prefix in ("tf.tpu.experimental.", "tf.compat.v1.tpu.experimental.", "tf.contrib.tpu."):
        for name in TPU_EMBEDDING_PARAMETERS:
            renames[prefix + name] = "common.tpu.embedding." + name
    for name in ("embedding_column", "shared_embedding_columns"):  # (TF 1.x's names; TensorFlow 2.21 kept v1's)
        renames["tf.tpu.experimental." + name] = "tf.compat.v1.tpu.experimental." + name
    for module, home, names in (("tpu_config", "run_config", ("RunConfig", "TPUConfig", "InputPipelineConfig")),
                                ("tpu_estimator", "estimator", ("TPUEstimator", "TPUEstimatorSpec")),
                                ("tpu_optimizer", "estimator", ("CrossShardOptimizer",))):
        for name in names:  # (TF 1.x's modules, as the TPU models imported them)
            renames[f"tf.contrib.tpu.python.tpu.{module}.{name}"] = f"common.tpu.{home}.{name}"
    for name in ("tf.compat.v1.tpu.CrossShardOptimizer", "tf.tpu.CrossShardOptimizer"):
        renames[name] = "common.tpu.estimator.CrossShardOptimizer"
    for name in ("tf.compat.v1.placeholder", "tf.placeholder"):
        renames[name] = "common.placeholder"
    for prefix in ("tf.keras.estimator.", "tf.compat.v1.keras.estimator."):
        renames[prefix + "model_to_estimator"] = "common.model_to_estimator"
    for prefix in KERAS_PREFIXES:  # (Keras 3's Input refuses a model_fn's tensor; Keras 2's took it)
        for name in ("Input", "layers.Input"):
            renames[prefix + name] = "common.tf1.keras_input.Input"
    for prefix in KERAS_PREFIXES:
        for name, value in REDUCTIONS.items():
            renames[prefix + "losses.Reduction." + name] = value
        renames[prefix + "optimizers.legacy"] = prefix + "optimizers"
        renames[prefix + "layers.DenseFeatures"] = "common.layers.DenseFeatures"
        renames[prefix + "experimental.SequenceFeatures"] = "common.layers.SequenceFeatures"
    return renames


RENAMES = _renames()

# tf.contrib modules TF1 programs bound to a name (`layers = tf.contrib.layers`), as the module of this project
# holding what the upgrade maps their names to (a name it does not map is still an ERROR where it is used).
MODULE_RENAMES = {"tf.contrib.layers": "common.contrib.layers", "tf.contrib.lookup": "common.contrib.layers",
                  "tf.contrib.rnn": "common.contrib.rnn_cell", "tf.contrib.crf": "common.contrib.crf",
                  "tf.contrib.learn": "common.contrib.learn", "tf.contrib.losses": "common.contrib.losses",
                  **{module: "common.contrib.learn_datasets" for module in LEARN_DATASETS_MODULES},
                  "tf.contrib.predictor": "common.contrib.predictor", "tf.contrib.slim": "common.contrib.slim",
                  "tf.contrib.slim.python.slim": "common.contrib.slim"}

# What a TF1 original's tf.estimator names meant that TensorFlow 2.21 cannot say (it has no tf.estimator): TF1's
# tf.estimator.DNNClassifier was the class tf.compat.v1.estimator kept, with TF1's defaults.
TF1_MEANINGS = {"tf.estimator." + name: "tf.compat.v1.estimator." + name for name in TF1_DEFAULT_CANNED}

# Calls that only made sense in a TF1 graph; a statement that is one of them is commented out.
REMOVED_CALLS = ("tf.compat.v1.disable_eager_execution", "tf.compat.v1.disable_v2_behavior",
                 "tf.compat.v1.disable_resource_variables")

_SYNC_REPLICAS = ("towers already average gradients synchronously; for several synchronous hosts give TF_CONFIG "
                  "chief and worker tasks without ps tasks (the mains' --sync)")

# Prefixes with no counterpart here, and what to do instead (longest prefix wins).
UNSUPPORTED = {
    "tf.contrib.": "tf.contrib is gone since TensorFlow 2.0; find the op in core TensorFlow or Keras",
    "tf.contrib.seq2seq.": "tf.contrib.seq2seq is gone: TensorFlow Addons kept it as tfa.seq2seq up to "
                           "TensorFlow 2.15 (unmaintained since 2024, not for 2.16+); here build the decoder from "
                           "Keras: keras.layers.AdditiveAttention (Bahdanau) or Attention (Luong) over the encoder's "
                           "outputs, a keras.layers.LSTMCell/GRUCell stepped in tf.while_loop for greedy decoding, "
                           "and tf.nn.sparse_softmax_cross_entropy_with_logits masked by tf.sequence_mask for "
                           "sequence_loss",
    "tf.contrib.rnn.": "this tf.contrib.rnn name has no counterpart in common.contrib.rnn_cell; use the Keras cell "
                       "(keras.layers.LSTMCell, GRUCell; LayerNormBasicLSTMCell: an LSTMCell whose gates you "
                       "normalize with keras.layers.LayerNormalization; OutputProjectionWrapper: a Dense layer on "
                       "the outputs)",
    "tf.contrib.gan.": "tf.contrib.gan became TFGAN (the tensorflow_gan package), whose estimators are built on "
                       "tf.estimator: upgrade tensorflow_gan's source with this command too and import that copy",
    "tf.compat.v1.train.SyncReplicasOptimizer": _SYNC_REPLICAS,
    "tf.train.SyncReplicasOptimizer": _SYNC_REPLICAS,
    "tf.compat.v1.layers.": "this TF1 layer has no counterpart in common.tf1.layers; build the Keras layer "
                            "(tf.keras.layers...) inside model_fn",
    "tf.layers.": "this TF1 layer has no counterpart in common.tf1.layers; build the Keras layer inside model_fn",
    "tf.compat.v1.metrics.": "this TF1 metric has no counterpart in common.tf1.metrics; update a tf.keras.metrics "
                             "object in model_fn and return it in eval_metric_ops",
    "tf.estimator.experimental.": "this tf.estimator.experimental name has no counterpart here (the early-stopping "
                                  "hooks do: common.early_stopping)",
}
_RNN_ESTIMATOR = ("the premade RNN estimators have no counterpart in common.canned: write a model_fn of "
                  "common.layers.SequenceFeatures over the sequence columns, a keras.layers.RNN of the cell (LSTMCell, "
                  "GRUCell) and a Dense logits layer, with the classifier's loss and metrics")
for _prefix in ESTIMATOR_PREFIXES + ("tf.contrib.estimator.",):
    for _name in ("RNNClassifier", "RNNEstimator"):
        UNSUPPORTED[_prefix + ("" if _prefix.startswith("tf.contrib") else "experimental.") + _name] = _RNN_ESTIMATOR
for _prefix in ESTIMATOR_PREFIXES:
    UNSUPPORTED.setdefault(_prefix, "this tf.estimator name has no counterpart here (the premade estimators "
                                    "and heads do: common.canned; else write a model_fn)")
