"""What a model_fn call records: a deferred update says its optimizer's learning rate when it can."""

import tensorflow as tf

from common.variables.call_record import CallRecord, DeferredUpdate


class Rates:
    def __init__(self, **attributes):
        self.__dict__.update(attributes)


def test_the_learning_rate_of_a_deferred_update_is_its_optimizers():
    def rate(optimizer):
        return DeferredUpdate(optimizer, [], apply=None).learning_rate

    assert float(rate(Rates(_learning_rate=0.5))) == 0.5  # TF1's optimizers
    assert float(rate(Rates(learning_rate=tf.constant(0.25)))) == 0.25  # BERT's AdamWeightDecayOptimizer
    assert float(rate(Rates(_learning_rate=lambda: 0.125))) == 0.125  # a callable rate
    assert rate(Rates()) is None and rate(Rates(learning_rate="adaptive")) is None
    assert rate(Rates(learning_rate=tf.constant(0.1))).dtype == tf.float32


def test_a_record_starts_empty():
    record = CallRecord()
    assert (record.scalars, record.summaries, record.updates, record.assigns, record.checkpoint_inits) == \
        ({}, [], [], [], [])
