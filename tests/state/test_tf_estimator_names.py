"""Where a checkpoint tf.estimator wrote keeps each of this project's variables (the names below are those of
the TF 2.15 model dirs in tests/data/tf215_model_dirs, where tests/state/test_tf215_model_dirs loads them)."""

from common.state import tf_estimator_names as names


def test_keras_layers_built_in_model_fn_and_tf1_slots_of_a_keras_2_optimizer_are_found():
    saved = {"hidden/kernel", "dnn/logits/kernel", "global_step", "training/Adagrad/dnn/logits/kernel/accumulator",
             "training/Ftrl/linear/w/accumulator", "training/Ftrl/linear/w/linear", "training/Adagrad/decay"}
    wanted = ["model_fn/hidden/kernel", "dnn/logits/kernel", "dnn/logits/kernel/Adagrad", "linear/w/Ftrl",
              "linear/w/Ftrl_1", "global_step", "dnn/logits/kernel/Momentum"]
    assert names.saved_names(saved, wanted) == {
        "model_fn/hidden/kernel": "hidden/kernel",
        "dnn/logits/kernel/Adagrad": "training/Adagrad/dnn/logits/kernel/accumulator",
        "linear/w/Ftrl": "training/Ftrl/linear/w/accumulator", "linear/w/Ftrl_1": "training/Ftrl/linear/w/linear"}


def test_a_keras_3_optimizers_state_is_found_under_the_keras_2_optimizers_with_the_global_step_as_iterations():
    saved = {"dnn/logits/kernel", "global_step", "training/Adam/dnn/logits/kernel/m",
             "training/Adam/dnn/logits/kernel/v", "training/Adam/learning_rate"}
    wanted = ["model_fn/adam/dnn_logits_kernel_momentum", "model_fn/adam/dnn_logits_kernel_velocity",
              "model_fn/adam/iteration", "model_fn/adam/learning_rate", "global_step"]
    assert names.saved_names(saved, wanted) == {
        "model_fn/adam/dnn_logits_kernel_momentum": "training/Adam/dnn/logits/kernel/m",
        "model_fn/adam/dnn_logits_kernel_velocity": "training/Adam/dnn/logits/kernel/v",
        "model_fn/adam/iteration": "global_step", "model_fn/adam/learning_rate": "training/Adam/learning_rate"}


def test_model_to_estimators_object_graph_is_read_by_layer_order():
    attribute = names.ATTRIBUTE
    saved = {f"layer_with_weights-{i}/{a}{attribute}" for i in (0, 1) for a in ("kernel", "bias")} | {
        "estimator_global_step" + attribute, "optimizer/learning_rate" + attribute,
        "layer_with_weights-1/bias/.OPTIMIZER_SLOT/optimizer/m" + attribute}
    wanted = ["global_step", "keras_model/sequential/hidden/kernel", "keras_model/sequential/hidden/bias",
              "keras_model/sequential/output/kernel", "keras_model/sequential/output/bias",
              "optimizer/sequential_output_bias_momentum", "optimizer/iteration", "optimizer/learning_rate"]
    found = names.saved_names(saved, wanted)
    assert found["keras_model/sequential/output/kernel"] == "layer_with_weights-1/kernel" + attribute
    assert found["keras_model/sequential/hidden/bias"] == "layer_with_weights-0/bias" + attribute
    assert found["optimizer/sequential_output_bias_momentum"] == \
        "layer_with_weights-1/bias/.OPTIMIZER_SLOT/optimizer/m" + attribute
    assert found["global_step"] == found["optimizer/iteration"] == "estimator_global_step" + attribute
    assert found["optimizer/learning_rate"] == "optimizer/learning_rate" + attribute


def test_a_checkpoint_of_the_projects_own_maps_nothing():
    assert names.saved_names({"dense/kernel", "global_step"}, ["dense/kernel", "global_step"]) == {}
