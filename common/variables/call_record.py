"""What one call of model_fn hands the framework besides its EstimatorSpec.

TF1 code inside model_fn changes state as it goes: an optimizer's
apply_gradients updates the variables, batch norm moves its statistics,
summaries are written, init_from_checkpoint says how the model starts. On
towers none of that can happen inside a tower's call: the update must wait
for every tower's gradients. So a call records it here instead, and the
framework does it once, after the towers (common.engine.step), or when the
model is initialized (common.estimator.model_state).
"""

import dataclasses
from typing import Callable, Dict, List, Optional, Tuple

import keras
import tensorflow as tf

from common.tf1_runtime import tf1_graph


@dataclasses.dataclass
class DeferredUpdate:
    """An optimizer's apply_gradients called in model_fn, not yet done.

    apply(grads_and_vars) makes the update (an op) with the gradients given:
    the framework calls it once per step with each variable's gradient
    averaged over the towers.
    """

    optimizer: object
    grads_and_vars: List[Tuple[Optional[tf.Tensor], object]]
    apply: Callable

    @property
    def learning_rate(self):
        """The optimizer's learning rate as a float32 scalar tensor, or None when it does not say."""
        for attribute in ("_learning_rate", "learning_rate", "_lr"):
            rate = getattr(self.optimizer, attribute, None)
            if isinstance(rate, keras.optimizers.schedules.LearningRateSchedule):
                rate = rate(self.optimizer.iterations)  # (a Keras optimizer's schedule, of its own step)
            elif callable(rate) and not isinstance(rate, (tf.Tensor, tf.Variable)):
                rate = rate()
            if isinstance(rate, (int, float, tf.Tensor, tf.Variable)) or hasattr(rate, "dtype"):
                return tf.cast(rate, tf.float32)
        return None


@dataclasses.dataclass
class CheckpointInit:
    """init_from_checkpoint in model_fn: these variables start from that checkpoint when the model is new."""

    checkpoint: str
    tensors: Dict[str, str]  # variable name (as checkpointed here) -> tensor name in `checkpoint`


@dataclasses.dataclass
class CallRecord:
    """scalars: summary.scalar values (name -> float32 scalar); summaries: other summaries, serialized
    Summary protos; updates: DeferredUpdates; assigns: (variable, value) to assign after the step;
    checkpoint_inits: CheckpointInits; graph: the graph the call runs in; collections: its TF1 variable
    collections as the call left them (key -> variables); after_update: what model_fn made to follow the
    optimizer's update (an ExponentialMovingAverage's apply: common.adapters.moving_averages); writes_global_step:
    the call's train_op assigns the global step itself (BERT's `global_step.assign(global_step + 1)`)."""

    scalars: Dict[str, tf.Tensor] = dataclasses.field(default_factory=dict)
    summaries: List[tf.Tensor] = dataclasses.field(default_factory=list)
    updates: List[DeferredUpdate] = dataclasses.field(default_factory=list)
    assigns: List[Tuple[object, tf.Tensor]] = dataclasses.field(default_factory=list)
    checkpoint_inits: List[CheckpointInit] = dataclasses.field(default_factory=list)
    graph: object = None  # the graph model_fn is traced in (see refuse_conditional_update)
    collections: Dict[str, list] = dataclasses.field(default_factory=dict)
    after_update: List[Callable] = dataclasses.field(default_factory=list)  # done once, after the step's update
    writes_global_step: bool = False  # a train call's train_op assigns the global step itself (BERT's)

    def keep_graph_state(self):
        """Keeps what the call's fresh TF1 graph collected before it is dropped: its summaries, and its
        variables by collection (what a TF1 hook's begin() found in tf.estimator's graph)."""
        self.summaries.extend(self.graph.get_collection(tf.compat.v1.GraphKeys.SUMMARIES))
        self.collections = {key: list(self.graph.get_collection(key)) for key in tf1_graph.VARIABLE_COLLECTIONS}


_CONTROL_FLOW_GRAPHS = ("CondBranchFuncGraph", "WhileCondFuncGraph", "WhileBodyFuncGraph")


def refuse_conditional_update(call_graph):
    """An update is done once per step, after the towers, whatever model_fn's control flow said: one made in a
    tf.cond branch or a loop's body (TFP's LDA chose between two apply_gradients with tf.cond) would run
    unconditionally, so it is refused."""
    graph = tf.compat.v1.get_default_graph()
    while graph is not None and graph is not call_graph:
        if type(graph).__name__ in _CONTROL_FLOW_GRAPHS:
            raise NotImplementedError(
                "an optimizer's apply_gradients (or minimize) inside tf.cond or a loop in model_fn is not supported: "
                "the framework applies each update once per step after averaging it over the towers, so the "
                "condition would be lost. Call it unconditionally, and choose what it updates with the gradients "
                "(tf.where(condition, gradient, tf.zeros_like(gradient)) for a variable not to move)")
        graph = getattr(graph, "outer_graph", None)
