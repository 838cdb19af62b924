"""Runs a program as `python` would, with start-up marks on stderr (benchmarks/startup.py's helper).

    python benchmarks/startup_driver.py SCRIPT.py [ARGS...]
    python benchmarks/startup_driver.py -m MODULE [ARGS...]

Standard library only: it runs under the project's Python and under a
TensorFlow 2.15 virtualenv's (tf.estimator) alike, and imports nothing of
either before the program does (an import hook patches the estimator's
modules as the program loads them, so import order and oneDNN's choice are
the program's own). Each mark is one stderr line,

    STARTUP_MARK <unix time> <event> <detail>

with events phase_begin/phase_end (Estimator.train, evaluate, predict,
export_saved_model: the outermost call of each), first_run (the first step
of a phase: our compiled loop's first call returning, or tf.estimator's
first MonitoredSession.run), model_fn (one call: the phase and where it was
called from) and, with STARTUP_DETAIL=1, timed (the seconds one call of a
framework function took: input_fn, probes, tracing, the first call of each
compiled function, checkpoint save/restore, SavedModel writing). With
STARTUP_PROFILE_DIR=DIR each outermost phase runs under cProfile, written to
DIR/<n>_<phase>.prof.
"""

import functools
import importlib.abc
import importlib.util
import inspect
import os
import runpy
import sys
import threading
import time

DETAIL = os.environ.get("STARTUP_DETAIL") == "1"
PROFILE_DIR = os.environ.get("STARTUP_PROFILE_DIR")
_phases = []          # the stack of (name, serial) of the estimator calls under way
_serial = [0]
_first_run_seen = set()
_local = threading.local()


def mark(event, detail=""):
    sys.stderr.write(f"STARTUP_MARK {time.time():.6f} {event} {detail}\n")
    sys.stderr.flush()


def _phase():
    return f"{_phases[-1][0]}#{_phases[-1][1]}" if _phases else "none"


class _Profile:
    def __init__(self, name):
        self.name, self.profile = name, None

    def __enter__(self):
        if PROFILE_DIR and len(_phases) == 1:
            import cProfile
            self.profile = cProfile.Profile()
            self.profile.enable()

    def __exit__(self, *exc):
        if self.profile is not None:
            self.profile.disable()
            os.makedirs(PROFILE_DIR, exist_ok=True)
            self.profile.dump_stats(os.path.join(PROFILE_DIR, f"{_phases[-1][1]}_{self.name}.prof"))


def _phase_wrapper(name, fn):
    """Marks the outermost estimator call of a phase (nested ones, e.g. export_savedmodel's own
    export_saved_model or TPUEstimator's super().train, count as the outer one)."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            if _phases and _phases[-1][0] == name:
                yield from fn(*args, **kwargs)
                return
            _serial[0] += 1
            _phases.append((name, _serial[0]))
            mark("phase_begin", _phase())
            try:
                with _Profile(name):
                    yield from fn(*args, **kwargs)
            finally:
                mark("phase_end", _phase())
                _phases.pop()
        return generator

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _phases and _phases[-1][0] == name:
            return fn(*args, **kwargs)
        _serial[0] += 1
        _phases.append((name, _serial[0]))
        mark("phase_begin", _phase())
        try:
            with _Profile(name):
                return fn(*args, **kwargs)
        finally:
            mark("phase_end", _phase())
            _phases.pop()
    return wrapper


def _caller(skip):
    """Where a model_fn call came from: the innermost framework functions above it."""
    names, frame = [], sys._getframe(skip)
    while frame is not None and len(names) < 3:
        path = frame.f_code.co_filename
        if ("/common/" in path or "tensorflow_estimator" in path) and "startup_driver" not in path:
            names.append(f"{os.path.basename(path)[:-3]}.{frame.f_code.co_name}")
        frame = frame.f_back
    return "<".join(names)


def _model_fn_wrapper(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            mark("model_fn", f"{_phase()} {time.perf_counter() - start:.3f} {_caller(2)}")
    return wrapper


def _first_run_wrapper(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        if len(args) > 1 and getattr(args[1], "__name__", None) == "trace":  # (a loop traced ahead of its first run)
            return result
        if _phases and _phase() not in _first_run_seen:
            _first_run_seen.add(_phase())
            mark("first_run", _phase())
        return result
    return wrapper


def _timed_wrapper(label, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        depth = getattr(_local, "depth", 0)
        _local.depth = depth + 1
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _local.depth = depth
            mark("timed", f"{_phase()} {label} {time.perf_counter() - start:.4f} {depth}")
    return wrapper


def _first_call_wrapper(label, fn):
    """Times the first eager call of each compiled (atomic) function: TensorFlow instantiates and
    optimizes (grappler) its graph then, besides running it."""
    called = set()

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        key = getattr(self, "name", id(self))
        eager = getattr(getattr(self, "_bound_context", None), "executing_eagerly", lambda: False)()
        if key in called or not eager:
            return fn(self, *args, **kwargs)
        called.add(key)
        start = time.perf_counter()
        try:
            return fn(self, *args, **kwargs)
        finally:
            mark("timed", f"{_phase()} {label} {time.perf_counter() - start:.4f} 9 {key}")
    return wrapper


_conversions = {}  # autograph: (phase, the converted function) -> [count, seconds]


def _conversion_wrapper(fn):
    """Counts autograph's conversions of Python functions (each a parse, transform and reload)."""
    @functools.wraps(fn)
    def wrapper(entity, *args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(entity, *args, **kwargs)
        finally:
            target = getattr(entity, "__func__", entity)
            name = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"
            entry = _conversions.setdefault((_phase(), name), [0, 0.0])
            entry[0] += 1
            entry[1] += time.perf_counter() - start
    return wrapper


def report_conversions():
    """Autograph's conversions per phase: the total, then the costliest functions."""
    phases = {}
    for (phase, name), (count, seconds) in _conversions.items():
        phases.setdefault(phase, []).append((seconds, count, name))
    for phase, rows in phases.items():
        mark("autograph_total", f"{phase} {sum(r[1] for r in rows)} {sum(r[0] for r in rows):.3f}")
        for seconds, count, name in sorted(rows, reverse=True)[:15]:
            mark("autograph", f"{phase} {count} {seconds:.3f} {name}")


def _patch(module, qualname, make):
    owner, _, attr = qualname.rpartition(".")
    target = functools.reduce(getattr, owner.split("."), module) if owner else module
    setattr(target, attr, make(getattr(target, attr)))


PHASES = ("train", "evaluate", "predict", "export_saved_model", "export_savedmodel")
OURS_EST = "common.estimator.estimator"
REF_EST = "tensorflow_estimator.python.estimator.estimator"

PATCHES = {  # module -> [(qualname, wrapper maker)], applied right after the module first loads
    OURS_EST: [(f"Estimator.{p}", functools.partial(_phase_wrapper, p.replace("savedmodel", "saved_model")))
               for p in PHASES],
    REF_EST: [(f"Estimator.{p}", functools.partial(_phase_wrapper, p.replace("savedmodel", "saved_model")))
              for p in PHASES] + [("Estimator._call_model_fn", _model_fn_wrapper)],
    "common.engine.model_builder": [("ModelBuilder.call", _model_fn_wrapper)],
    "common.estimator.parts": [("EstimatorParts.run_in_scope", _first_run_wrapper)],
    "tensorflow.python.training.monitored_session": [("_MonitoredSession.run", _first_run_wrapper)],
}
DETAIL_PATCHES = {
    "common.engine.inputs": ["dataset_for_run"],
    "common.engine.model_builder": ["ModelBuilder.probe"],
    "common.estimator.model_state": ["ModelState.restore"],
    "common.state.checkpoint_store": ["CheckpointStore.save"],
    "common.state.model_dir_lock": ["hold"],
    "common.export.saved_model": ["signatures", "write_saved_model"],
    "common.export.receivers": ["serving_inputs"],
    REF_EST: ["Estimator._get_features_and_labels_from_input_fn", "Estimator._train_with_estimator_spec",
              "Estimator._evaluate_build_graph", "Estimator._add_meta_graph_for_mode",
              "Estimator._export_all_saved_models"],
    "tensorflow.python.training.monitored_session": ["MonitoredTrainingSession", "MonitoredSession.__init__",
                                                     "Scaffold.finalize"],
    "tensorflow.python.training.saver": ["Saver.save", "Saver.restore", "Saver.__init__"],
    "tensorflow.python.saved_model.builder_impl": ["_SavedModelBuilder.save"],
    "tensorflow.python.saved_model.save": ["save"],
    "tensorflow.python.eager.polymorphic_function.tracing_compilation": ["_create_concrete_function"],
}
if DETAIL:
    for _module, _names in DETAIL_PATCHES.items():
        PATCHES.setdefault(_module, [])
        PATCHES[_module] += [(n, functools.partial(_timed_wrapper, f"{_module.rsplit('.', 1)[-1]}.{n}"))
                             for n in _names]
    PATCHES.setdefault("tensorflow.python.eager.polymorphic_function.atomic_function", []).append(
        ("AtomicFunction.call_flat", functools.partial(_first_call_wrapper, "first_call")))
    PATCHES.setdefault("tensorflow.python.autograph.impl.api", []).append(("_convert_actual", _conversion_wrapper))


class _PatchingFinder(importlib.abc.MetaPathFinder):
    """Finds the patched modules through the rest of sys.meta_path and patches each after it runs."""

    def __init__(self):
        self.busy = False

    def find_spec(self, name, path, target=None):
        if name not in PATCHES or self.busy:
            return None
        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None:
            return None
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            for qualname, make in PATCHES.pop(name, ()):
                try:
                    _patch(module, qualname, make)
                except AttributeError as error:
                    mark("patch_failed", f"{name}.{qualname}: {error}")
        spec.loader.exec_module = exec_and_patch
        return spec


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    sys.meta_path.insert(0, _PatchingFinder())
    mark("start", os.getpid())
    if args[0] == "-m":
        sys.argv = [args[1]] + args[2:]
        sys.path[0] = os.getcwd()
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path[0] = os.path.dirname(os.path.abspath(args[0]))
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    try:
        main()
    finally:
        if DETAIL:
            report_conversions()
        mark("exit")
