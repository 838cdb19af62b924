"""Wide and deep on census-shaped data: common.canned vs tf.estimator 2.15 vs Keras 3's FeatureSpace, one run.

    python benchmarks/premade_throughput.py [--rows=300000] [--batch_size=256] [--train_steps=1500]
        [--reference_python=/path/to/tf2.15/venv/bin/python]

Writes --rows rows of synthetic census-like data (4 numeric columns, 8
categorical ones of 2 to 200 values, a label that depends on them), then,
one process at a time on the same rows: `DNNLinearCombinedClassifier` of
common.canned and of tf.estimator 2.15 (in the virtualenv of
--reference_python: tensorflow-cpu==2.15.1, which brings
tensorflow-estimator), on the same feature columns (wide: the categorical
columns, age buckets and an education x occupation cross; deep: indicator
and embedding columns and the numeric ones; DNN 100-50, their default
optimizers), and a Keras 3 model of the same shape on
`keras.utils.FeatureSpace` (the same crosses, embeddings and one-hot
encodings) fit on the same rows. Each trains --warmup_steps (ours at least
101, and evaluates 101 batches: a shorter run of ours compiles no loop,
common.engine.first_steps), then is timed
over --train_steps more (a second train() call: tf.estimator's per-call
graph building is counted as its users paid it) and --eval_steps of
evaluation, in --repeats processes per side (one at a time: a rate varies
by up to 1.5x between processes here). The rows are made tensors once,
outside the timed calls, for common's input_fn (what a TF 2 program's
input_fn closes over) as for Keras's datasets; tf.estimator's graph-mode
input_fn converts them in each call, as its users paid. Prints the median
examples/sec of each side and the ratios (goal: training and evaluation
>= 1.5x Keras's).
"""

import json
import os
import sys
import tempfile
import time

import numpy as np
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("rows", 300000, "Rows of synthetic census-shaped data.")
flags.DEFINE_integer("batch_size", 256, "Training and evaluation batch.")
flags.DEFINE_integer("warmup_steps", 100, "Training steps before the timed ones.")
flags.DEFINE_integer("train_steps", 1500, "Timed training steps.")
flags.DEFINE_integer("eval_steps", 300, "Timed evaluation steps.")
flags.DEFINE_string("reference_python", os.environ.get("TF215_PYTHON", "/work/ref215/venv/bin/python"),
                    "Python of a virtualenv with tensorflow-cpu==2.15.1 ('' to leave tf.estimator out).")
flags.DEFINE_integer("repeats", 3, "Processes per side; the median is compared (a side's rate varies by 1.5x "
                     "between processes on this 2-core machine).")
flags.DEFINE_integer("steps_per_loop", None, "common.canned's RunConfig(steps_per_loop=): steps per compiled call "
                     "(none: RunConfig's default, as many as the hooks allow).")
flags.DEFINE_enum("side", None, ["ours", "tf215", "keras"], "Internal: measure one side on --data.")
flags.DEFINE_string("data", None, "Internal: the .npz the sides read.")

CATEGORICAL = {  # column: number of values (the census columns' sizes, native_country and occupation larger)
    "workclass": 9, "education": 16, "marital_status": 7, "occupation": 200, "relationship": 6, "race": 5,
    "gender": 2, "native_country": 120}
NUMERIC = ("age", "education_num", "capital_gain", "hours_per_week")
AGE_BOUNDARIES = [18, 25, 30, 35, 40, 45, 50, 55, 60, 65]


def write_data(path, rows, seed=0):
    """Census-shaped columns (strings for the categorical ones) and a label that depends on them."""
    rng = np.random.RandomState(seed)
    data = {"age": rng.randint(17, 90, rows).astype(np.float32),
            "education_num": rng.randint(1, 17, rows).astype(np.float32),
            "capital_gain": (rng.exponential(1000, rows) * (rng.rand(rows) < 0.1)).astype(np.float32),
            "hours_per_week": rng.randint(1, 99, rows).astype(np.float32)}
    score = 0.04 * (data["age"] - 40) + 0.2 * (data["education_num"] - 9) + 0.0005 * data["capital_gain"]
    for name, size in CATEGORICAL.items():
        ids = rng.zipf(1.6, rows) % size
        data[name] = np.array([f"{name}_{i}" for i in range(size)])[ids]
        score += rng.normal(0, 0.6, size)[ids]
    data["label"] = (score + rng.logistic(size=rows) > 0.5).astype(np.int64)
    np.savez(path, **data)


def read_data(path):
    with np.load(path) as archive:
        data = {name: archive[name] for name in archive.files}
    return data, data.pop("label")


def feature_columns(fc):
    """(wide, deep) columns of tf.feature_column (`fc`), the same in TensorFlow 2.15 and 2.21."""
    categorical = {name: fc.categorical_column_with_vocabulary_list(name, [f"{name}_{i}" for i in range(size)])
                   for name, size in CATEGORICAL.items()}
    numeric = [fc.numeric_column(name) for name in NUMERIC]
    age_buckets = fc.bucketized_column(numeric[0], AGE_BOUNDARIES)
    cross = fc.crossed_column(["education", "occupation"], hash_bucket_size=1000)
    wide = list(categorical.values()) + [age_buckets, cross]
    deep = numeric + [fc.embedding_column(categorical[name], 8) for name in ("occupation", "native_country")] + [
        fc.indicator_column(categorical[name]) for name in CATEGORICAL if name not in ("occupation", "native_country")]
    return wide, deep


def _input_fn(tf, features, labels, repeat):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((features, labels))
        if repeat:
            dataset = dataset.shuffle(20000, seed=1).repeat()
        return dataset.batch(FLAGS.batch_size, drop_remainder=True).prefetch(2)
    return input_fn


def _timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def measure_estimator(side):
    """(train, eval) examples/sec of a DNNLinearCombinedClassifier: common.canned's or tf.estimator's."""
    import tensorflow as tf
    if side == "ours":
        import common
        import common.canned
        estimator_class = common.canned.DNNLinearCombinedClassifier
        config = common.RunConfig(steps_per_loop=FLAGS.steps_per_loop)
    else:
        estimator_class = tf.estimator.DNNLinearCombinedClassifier
        config = None
    features, labels = read_data(FLAGS.data)
    if side == "ours":  # (tensors once, as Keras's datasets hold them; TF 2.15's input_fn runs in a graph)
        features, labels = {name: tf.constant(column) for name, column in features.items()}, tf.constant(labels)
    wide, deep = feature_columns(tf.feature_column)
    estimator = estimator_class(model_dir=tempfile.mkdtemp(prefix=f"premade_{side}_"), config=config,
                                linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[100, 50])
    train_input = _input_fn(tf, features, labels, repeat=True)
    eval_input = _input_fn(tf, features, labels, repeat=False)
    warm_train, warm_eval = FLAGS.warmup_steps, 10
    if side == "ours":  # (a run of at most FEW_STEPS runs its steps alone and compiles no loop: warm up past it)
        from common.engine import first_steps
        warm_train, warm_eval = (max(n, first_steps.FEW_STEPS + 1) for n in (warm_train, warm_eval))
    estimator.train(train_input, steps=warm_train)
    train_secs = _timed(lambda: estimator.train(train_input, steps=FLAGS.train_steps))
    estimator.evaluate(eval_input, steps=warm_eval)
    eval_secs = _timed(lambda: estimator.evaluate(eval_input, steps=FLAGS.eval_steps))
    return FLAGS.train_steps * FLAGS.batch_size / train_secs, FLAGS.eval_steps * FLAGS.batch_size / eval_secs


def measure_keras():
    """(train, eval) examples/sec of the same wide-and-deep shape on keras.utils.FeatureSpace."""
    import keras
    import tensorflow as tf
    from keras.utils import FeatureSpace
    features, labels = read_data(FLAGS.data)
    space = FeatureSpace(
        features={**{name: FeatureSpace.float_normalized() for name in NUMERIC},
                  **{name: FeatureSpace.string_categorical(num_oov_indices=0) for name in CATEGORICAL}},
        crosses=[FeatureSpace.cross(("education", "occupation"), crossing_dim=1000)], output_mode="dict")
    space.adapt(tf.data.Dataset.from_tensor_slices(features).batch(4096))
    encoded = space.get_encoded_features()
    wide = keras.layers.Dense(1)(keras.layers.concatenate(
        [encoded[name] for name in CATEGORICAL] + [encoded["education_X_occupation"]]))
    deep_parts = [encoded[name] for name in NUMERIC]
    for name in CATEGORICAL:
        if name in ("occupation", "native_country"):
            ids = keras.ops.argmax(encoded[name], axis=-1)
            deep_parts.append(keras.layers.Embedding(CATEGORICAL[name], 8)(ids))
        else:
            deep_parts.append(encoded[name])
    deep = keras.layers.concatenate(deep_parts)
    for units in (100, 50):
        deep = keras.layers.Dense(units, activation="relu")(deep)
    logits = keras.layers.Add()([wide, keras.layers.Dense(1)(deep)])
    model = keras.Model(encoded, logits)  # on FeatureSpace's encodings, which the input pipeline computes
    model.compile(optimizer=keras.optimizers.Adagrad(0.001), loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=["accuracy"])

    def dataset(repeat):
        data = tf.data.Dataset.from_tensor_slices((features, labels.astype(np.float32)[:, None]))
        if repeat:
            data = data.shuffle(20000, seed=1).repeat()
        return data.batch(FLAGS.batch_size, drop_remainder=True).map(
            lambda x, y: (space(x), y), num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)

    train = dataset(True)
    model.fit(train, steps_per_epoch=FLAGS.warmup_steps, epochs=1, verbose=0)
    train_secs = _timed(lambda: model.fit(train, steps_per_epoch=FLAGS.train_steps, epochs=1, verbose=0))
    evaluation = dataset(False)
    model.evaluate(evaluation, steps=10, verbose=0)
    eval_secs = _timed(lambda: model.evaluate(evaluation, steps=FLAGS.eval_steps, verbose=0))
    return FLAGS.train_steps * FLAGS.batch_size / train_secs, FLAGS.eval_steps * FLAGS.batch_size / eval_secs


def run_side(side, python, data):
    """(train, eval) examples/sec of one side: the medians over --repeats processes, run in turn."""
    runs = [run_once(side, python, data) for _ in range(FLAGS.repeats)]
    return float(np.median([r[0] for r in runs])), float(np.median([r[1] for r in runs])), runs


def run_once(side, python, data):
    """(train, eval) examples/sec of one side, in its own process; exits with its log if it fails."""
    import harness
    command = [python, os.path.abspath(__file__), f"--side={side}", f"--data={data}",
               f"--batch_size={FLAGS.batch_size}", f"--warmup_steps={FLAGS.warmup_steps}",
               f"--train_steps={FLAGS.train_steps}", f"--eval_steps={FLAGS.eval_steps}",
               *([f"--steps_per_loop={FLAGS.steps_per_loop}"] if FLAGS.steps_per_loop else [])]
    out, err, status, _ = harness.run_measuring_memory(command)
    lines = [line for line in out.splitlines() if line.startswith("FIGURES ")]
    if status or not lines:
        sys.exit(f"the {side} side failed ({status}):\n{err[-3000:]}")
    figures = json.loads(lines[-1][len("FIGURES "):])
    return figures["train"], figures["eval"]


def main(argv):
    del argv
    if FLAGS.side:
        rates = measure_keras() if FLAGS.side == "keras" else measure_estimator(FLAGS.side)
        print("FIGURES " + json.dumps({"train": rates[0], "eval": rates[1]}))
        return
    with tempfile.TemporaryDirectory() as folder:
        data = os.path.join(folder, "census_shaped.npz")
        write_data(data, FLAGS.rows)
        sides = {"common.canned": run_side("ours", sys.executable, data),
                 "Keras 3 FeatureSpace fit": run_side("keras", sys.executable, data)}
        if FLAGS.reference_python:
            sides["tf.estimator 2.15"] = run_side("tf215", FLAGS.reference_python, data)
    print(f"premade_throughput: DNNLinearCombinedClassifier, {FLAGS.rows} rows, batch {FLAGS.batch_size}, "
          f"{FLAGS.train_steps} timed training steps, {FLAGS.eval_steps} evaluation steps, common.canned's "
          f"steps_per_loop={FLAGS.steps_per_loop or 'RunConfig default'}")
    for name, (train, evaluate, runs) in sides.items():
        print(f"  {name:26s} train {train:9.0f} ex/s   eval {evaluate:9.0f} ex/s   (runs, train/eval: "
              f"{', '.join(f'{t:.0f}/{e:.0f}' for t, e in runs)})")
    ours = sides["common.canned"]
    spread = [max(abs(run[i] / ours[i] - 1) for run in ours[2]) for i in (0, 1)]
    print(f"  common.canned's runs within {spread[0]:.0%} (train) and {spread[1]:.0%} (eval) of their median "
          "(goal <= 15%)")
    for name, goal in (("tf.estimator 2.15", None), ("Keras 3 FeatureSpace fit", 1.5)):
        if name in sides:
            print(f"  ratio to {name}: train {ours[0] / sides[name][0]:.2f}, eval {ours[1] / sides[name][1]:.2f}"
                  + (f" (goal >= {goal} each)" if goal else ""))


if __name__ == "__main__":
    app.run(main)
