"""The compiled loops: several steps per call, stopping at the input's end and after a non-finite loss."""

import gc
import weakref

import numpy as np
import tensorflow as tf

from common.engine import loops


def counting_step(total):
    """A train step that adds each batch to `total` and reports loss = 1 / batch."""

    def step(batch):
        total.assign_add(batch)
        return {"loss": 1.0 / tf.cast(batch, tf.float32), "batch": tf.cast(batch, tf.float32)}

    return step


def test_train_loop_runs_the_asked_steps_and_returns_the_last_values():
    total = tf.Variable(0, dtype=tf.int64)
    loop = loops.make_train_loop(counting_step(total), ("loss", "batch"))
    iterator = iter(tf.data.Dataset.range(1, 100, output_type=tf.int64))
    ran, exhausted, values = loop(iterator, 3)
    assert int(ran) == 3 and not bool(exhausted) and int(total.numpy()) == 1 + 2 + 3
    assert float(values["batch"]) == 3.0
    ran, _, values = loop(iterator, 2)  # a new count does not retrace, the iterator goes on
    assert int(ran) == 2 and float(values["batch"]) == 5.0
    assert loop.function.experimental_get_tracing_count() == 1


def test_train_loop_stops_at_the_end_of_the_input():
    total = tf.Variable(0, dtype=tf.int64)
    loop = loops.make_train_loop(counting_step(total), ("loss", "batch"))
    ran, exhausted, values = loop(iter(tf.data.Dataset.range(1, 5, output_type=tf.int64)), 10)
    assert int(ran) == 4 and bool(exhausted) and float(values["batch"]) == 4.0


def test_train_loop_stops_right_after_a_step_whose_loss_is_not_finite():
    total = tf.Variable(0, dtype=tf.int64)
    loop = loops.make_train_loop(counting_step(total), ("loss", "batch"))
    data = tf.data.Dataset.from_tensor_slices(np.array([2, 1, 0, 5, 6], np.int64))  # batch 0: loss = inf
    ran, exhausted, values = loop(iter(data), 5)
    assert int(ran) == 3 and not bool(exhausted)
    assert np.isinf(values["loss"].numpy()) and int(total.numpy()) == 3


def test_eval_loop_sums_totals_and_a_negative_count_runs_to_the_end():
    def step(batch):
        return {"sum": tf.cast(batch, tf.float64), "count": tf.constant(1.0, tf.float64)}

    loop = loops.make_eval_loop(step, ("sum", "count"))
    ran, exhausted, totals = loop(iter(tf.data.Dataset.range(10)), 4)
    assert int(ran) == 4 and not bool(exhausted) and totals["sum"].numpy() == 0 + 1 + 2 + 3
    ran, exhausted, totals = loop(iter(tf.data.Dataset.range(10)), -1)
    assert int(ran) == 10 and bool(exhausted)
    assert totals["sum"].numpy() == 45 and totals["count"].numpy() == 10
    assert totals["sum"].dtype == tf.float64


def test_a_call_of_no_steps_compiles_the_loop_and_reads_no_input():
    total = tf.Variable(0, dtype=tf.int64)
    train = loops.make_train_loop(counting_step(total), ("loss", "batch"))
    evaluate = loops.make_eval_loop(lambda batch: {"sum": tf.cast(batch, tf.float64)}, ("sum",))
    numbers = iter(tf.data.Dataset.range(1, 100, output_type=tf.int64))
    assert not train.has_run
    assert train(numbers, 0) == (0, False, train(numbers, 0).values) and train.has_run
    assert evaluate(numbers, 0).steps == 0 and int(total.numpy()) == 0
    ran, _, values = train(numbers, 2)
    assert int(ran) == 2 and float(values["batch"]) == 2.0  # the input starts at its first element
    assert float(evaluate(numbers, 1).values["sum"]) == 3.0


def test_one_step_runs_the_step_on_the_next_element_and_says_when_the_input_ended():
    total = tf.Variable(0, dtype=tf.int64)
    step = tf.function(counting_step(total), autograph=False)
    numbers = iter(tf.data.Dataset.range(4, 6, output_type=tf.int64))
    assert [float(loops.run_one_step(step, numbers).values["batch"]) for _ in range(2)] == [4.0, 5.0]
    assert loops.run_one_step(step, numbers) == (0, True, {}) and int(total.numpy()) == 9


def test_a_loop_looks_its_trace_up_once_per_iterator_and_frees_a_finished_one():
    def summing_step(batch):
        return {"loss": tf.constant(1.0), "batch": tf.cast(tf.reduce_sum(batch), tf.float32)}

    loop = loops.make_train_loop(summing_step, ("loss", "batch"))
    lookups = []
    find = loop.function.get_concrete_function
    loop.function.get_concrete_function = lambda *args: lookups.append(len(args)) or find(*args)
    numbers = iter(tf.data.Dataset.range(1, 100))
    values = [float(loop(numbers, 1).values["batch"]) for _ in range(3)]
    assert values == [1.0, 2.0, 3.0] and len(lookups) == 1 and loop.function.experimental_get_tracing_count() == 1
    iterator_ref = weakref.ref(numbers)
    del numbers
    gc.collect()
    assert iterator_ref() is None  # the loop keeps no strong reference to a run's iterator
    ran, _, last = loop(iter(tf.data.Dataset.range(10, 20)), 2)  # the same spec: the same trace
    assert int(ran) == 2 and float(last["batch"]) == 11.0 and loop.function.experimental_get_tracing_count() == 1
    ran, _, last = loop(iter(tf.data.Dataset.range(1, 5).batch(2)), 2)  # another spec: its own trace
    assert int(ran) == 2 and float(last["batch"]) == 3.0 + 4.0
    assert loop.function.experimental_get_tracing_count() == 2


def test_a_loop_runs_eagerly_when_functions_are_asked_to():
    seen = []

    def step(batch):
        seen.append(tf.executing_eagerly())
        return {"loss": tf.constant(1.0), "batch": tf.cast(batch, tf.float32)}

    loop = loops.make_train_loop(step, ("loss", "batch"))
    tf.config.run_functions_eagerly(True)
    try:
        ran, _, values = loop(iter(tf.data.Dataset.range(5)), 2)
    finally:
        tf.config.run_functions_eagerly(False)
    assert int(ran) == 2 and float(values["batch"]) == 1.0 and seen == [True, True]
