"""TF1 SessionRunHooks and CheckpointSaverListeners, run through the project's hook protocol.

A TF1 hook asked for tensors before each session.run (`before_run` returning
SessionRunArgs) and got their values after it (`after_run`). Here there is
no session: a hook names the values it wants (what common.hooks.value_name
reads: "loss", "learning_rate", "global_step", a spec scalar, a summary
written in model_fn or a tensor model_fn named, by name or as the tensor;
or the global-step variable), and gets them as numpy in the same structure. As in TF1, the global step a hook fetches
in the run of step N is N - 1 (the value the step started from), and the
first run is step 1; a hook hears every step (with one among the hooks,
steps run one per call, whatever RunConfig.steps_per_loop says). The session
a hook's methods get runs ops of an input_fn built in a TF1 graph (feeding
its placeholders; common.adapters.graph_input) and reads variables
(`session.run(global_step)`); anything else that needs the session itself is
refused by name. begin() and after_create_session() find model_fn's variables
in the graph's collections, as in tf.estimator's graph (a LoadEMAHook's
`ema.variables_to_restore()`). Inside the hook's methods, get_global_step() (tf.train's, after the
upgrade) answers the run's global-step variable, which a hook fetches as
any other value.
"""

import collections
import contextlib

import tensorflow as tf

from common.adapters import graph_input, moving_averages
from common.hooks import protocol as hooks_lib
from common.internals import tensorflow_internals
from common.tf1_runtime import tf1_graph
from common.variables import registry

SessionRunArgs = collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])
SessionRunArgs.__new__.__defaults__ = (None, None)
SessionRunValues = collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])


class SessionRunContext:
    """What before_run and after_run see: the stop request, and a session that reads variables."""

    def __init__(self, original_args=None):
        self.original_args = original_args
        self.session = _ValueSession()
        self.stop_requested = False

    def request_stop(self):
        self.stop_requested = True


class _NoSession:
    def __getattr__(self, name):
        raise NotImplementedError(
            f"session.{name}: TF2 has no session; a SessionRunHook asks for values with "
            "SessionRunArgs(fetches=\"loss\") (or a dict of such names) and reads them in after_run")


def _readable(fetch):
    """A variable (the global step a hook kept from begin) or an eager tensor: a value without a session."""
    return isinstance(fetch, tf.Variable) or tf.is_tensor(fetch) and not hasattr(fetch, "graph")


class _ValueSession(_NoSession):
    """The session a hook's methods get: it runs what belongs to an input_fn built in a TF1 graph (an
    initializable iterator fed numpy data through placeholders) in that graph's sessions, and reads variables
    (`session.run(global_step)`, as TF1 hooks read the step); nothing else."""

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        result = graph_input.run_in_input_graph(fetches, feed_dict)
        if result is not graph_input.NOT_AN_INPUT_GRAPH:
            return result
        if not feed_dict and all(_readable(f) for f in tf.nest.flatten(fetches)):
            return tf.nest.map_structure(lambda fetch: fetch.numpy(), fetches)
        return self.__getattr__("run")


class SessionRunHook:
    """tf.estimator.SessionRunHook's methods, all optional."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class CheckpointSaverListener:
    """tf.estimator.CheckpointSaverListener's methods, all optional."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class FeedFnHook(hooks_lib.Hook):
    """tf.train.FeedFnHook: feed_fn() -> {placeholder or its name: value} feeds an input_fn built of
    placeholders (in a TF1 graph: common.adapters.graph_input), once for each batch it gives, as TF1 fed each
    session.run, which read one batch."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def steps_to_trigger(self, step):
        return None  # (each batch is fed as it is read, whatever the calls' size)

    def begin(self, context):
        graph_input.start_feeding(self)

    def end(self, step, context):
        graph_input.stop_feeding(self)


class SessionRunHookAdapter(hooks_lib.Hook):
    """Runs a TF1 SessionRunHook as a common.hooks.Hook."""

    def __init__(self, hook):
        self.hook = hook
        self._context = None
        self._fetches = None
        self._names = ()  # the value names of the fetches
        self._run_context = None

    def steps_to_trigger(self, step):
        return 1  # a TF1 hook hears every run: each step is a call of its own

    @contextlib.contextmanager
    def _as_in_tf1(self):
        """While the hook's methods run: get_global_step() answers the run's global step, variables have their
        op, and an ExponentialMovingAverage names its averages, as in tf.estimator's graph."""
        with registry.global_step_for_hooks(self._run_context.global_step), tensorflow_internals.variable_ops(), \
                moving_averages.in_model_fn():
            yield

    def begin(self, context):
        self._run_context = context
        with self._as_in_tf1(), tf1_graph.model_graph(context.tf1_collections, context.global_step):
            self.hook.begin()
            self.hook.after_create_session(_ValueSession(), None)

    def before_step(self, step):
        self._context = SessionRunContext(SessionRunArgs(fetches=None))
        with self._as_in_tf1():
            args = self.hook.before_run(self._context)
        self._fetches = None if args is None else args.fetches
        if args is not None and args.feed_dict:
            raise NotImplementedError(
                f"{type(self.hook).__name__}.before_run: SessionRunArgs(feed_dict=...) fed each TF1 session.run; "
                "here each step reads input_fn's batch: give the data to input_fn (a Dataset, numpy_input_fn, or "
                "placeholders fed once in after_create_session)")
        self._names = () if self._fetches is None else tuple(
            hooks_lib.value_name(f) for f in tf.nest.flatten(self._fetches))
        self._run_context.check_offered(self._names, f"{type(self.hook).__name__}.before_run")
        return self._names

    def after_step(self, step, values, context):
        if any(name not in values for name in self._names):
            return  # the input ended before the step it asked about: TF1's run raised, after_run never came
        if self._context is None:  # (an evaluation's batches: the eval loop asks its hooks for nothing)
            self._context = SessionRunContext(SessionRunArgs(fetches=None))
        results = None  # as TF1 gave a hook whose before_run asked for nothing
        if self._fetches is not None:  # (an evaluation's global step is the evaluated checkpoint's)
            named = values if self._run_context.evaluation else {
                **values, "global_step": step if self._run_context.step_read_after_update else step - 1}
            results = tf.nest.map_structure(lambda fetch: named.get(hooks_lib.value_name(fetch)), self._fetches)
        with self._as_in_tf1():
            self.hook.after_run(self._context, SessionRunValues(results, None, None))
        if self._context is not None and self._context.stop_requested:
            context.request_stop()

    def end(self, step, context):
        with self._as_in_tf1():
            self.hook.end(_ValueSession())


class SavingListenerAdapter(hooks_lib.Hook):
    """Runs a TF1 CheckpointSaverListener as a saving listener (after_save(estimator,
    step)) and, for its end, as a hook of the run. It hears the save of the
    starting state too, as TF1's listeners did."""

    hears_initial_save = True

    def __init__(self, listener):
        """Made when training starts: the listener begins before the first save."""
        self.listener = listener
        self.listener.begin()

    def steps_to_trigger(self, step):
        return None  # (any number of steps a call suits it)

    def after_save(self, estimator, step):
        self.listener.before_save(_ValueSession(), step)
        self.listener.after_save(_ValueSession(), step)

    def end(self, step, context):
        self.listener.end(_ValueSession(), step)


def adapt_hooks(hooks):
    """The hooks, each TF1 SessionRunHook (it has before_run) wrapped to run here; TensorFlow's own
    FeedFnHook (a program not upgraded) is this module's."""
    return [FeedFnHook(h.feed_fn) if isinstance(h, tf.compat.v1.train.FeedFnHook) else
            SessionRunHookAdapter(h) if hasattr(h, "before_run") and not isinstance(h, hooks_lib.Hook) else h
            for h in hooks or ()]


def adapt_listeners(listeners):
    """The saving listeners, each TF1 CheckpointSaverListener (it has before_save) wrapped."""
    return [SavingListenerAdapter(x) if hasattr(x, "before_save") else x for x in listeners or ()]

