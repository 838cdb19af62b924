"""input_fns that return tensors, as TF1 input_fns did.

tf.estimator called input_fn in its graph and took what it returned: a
Dataset, or tensors, most often `make_one_shot_iterator(dataset).get_next()`
transformed further (a label popped out of the features dict, a vocabulary
lookup), sometimes constants fed to every step. The Estimator here reads a
Dataset. `dataset_of(call)` calls input_fn once to see what it returns (its
get_next() an element of no rows, so that nothing is read yet); for
tensors, the Dataset is the one the iterator was made on (or one endless
element, when input_fn made no iterator), mapped by input_fn itself: input_fn
is called again inside `Dataset.map`, where `get_next()` returns the map's
element. Everything input_fn did to the element so runs once per element,
as it ran once per step in TF1's graph. An input_fn that needs a graph
(queue runners) is run in one (common.adapters.graph_input).
"""

import contextvars

import numpy as np
import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.adapters import graph_input
from common.engine import inputs

_NOT_MAPPING = object()
_MAPPED_ELEMENT = contextvars.ContextVar("common_tf1_mapped_element", default=_NOT_MAPPING)
_DATASETS_ITERATED = contextvars.ContextVar("common_tf1_datasets_iterated", default=None)
_STRUCTURE_ONLY = contextvars.ContextVar("common_tf1_structure_only", default=False)


class Iterator:
    """TF1's iterator over a Dataset: get_next() is the next element (see the module)."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._eager = None
        self._graph_iterator = None
        iterated = _DATASETS_ITERATED.get()
        if iterated is not None:
            iterated.append(dataset)

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def get_next(self, name=None):
        element = _MAPPED_ELEMENT.get()
        if element is not _NOT_MAPPING:
            return element
        if tf.inside_function():  # dataset_of's first look inside a tf.function (a parameter-server worker's
            return self._no_rows()  # dataset): the structure is read
        if not tf.executing_eagerly():  # input_fn built in a TF1 graph (common.adapters.graph_input): TF1's iterator
            if self._graph_iterator is None:
                self._graph_iterator = tf.compat.v1.data.make_one_shot_iterator(self._dataset)
            return self._graph_iterator.get_next(name)
        if _STRUCTURE_ONLY.get():  # dataset_of's first look: an element's structure, not its values
            return self._no_rows()
        first = self._eager is None
        if first:
            self._eager = iter(self._dataset)
        try:
            return next(self._eager)
        except StopIteration:
            if not first:
                raise
            # A program looking at its own input_fn's tensors (TF1 gave symbolic ones, not values) over a
            # dataset that holds nothing, as TF1 notebooks did with an empty file pattern: tensors of no rows
            logging.warning("get_next(): the dataset holds no element; giving empty tensors of its element's "
                            "shapes, as TF1's graph tensors were only shapes until run")
            return self._no_rows()

    def _no_rows(self):
        """An element of the dataset's structure with no rows."""
        return tf.nest.map_structure(_empty, self._dataset.element_spec)


def _empty(spec):
    """A value of `spec` with no rows (each unknown dimension 0)."""
    shape = [0 if d is None else d for d in spec.shape.as_list()] if spec.shape.rank is not None else [0]
    if isinstance(spec, tf.SparseTensorSpec):
        return tf.SparseTensor(tf.zeros([0, len(shape)], tf.int64), tf.zeros([0], spec.dtype), shape)
    return tf.zeros(shape, spec.dtype)


def make_one_shot_iterator(dataset):
    """tf.compat.v1.data.make_one_shot_iterator, usable in an input_fn the Estimator calls."""
    return Iterator(dataset)


def _is_tensor_like(value):
    return value is None or isinstance(value, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor, np.ndarray, np.generic,
                                               int, float, bool, str, bytes))


def _first_look(call, iterated):
    """What `call()` returns, its iterators' get_next() giving an element of no rows (reading a real one
    costs the pipeline's start: a shuffle buffer filled, files opened), or a real one where input_fn cannot
    take the empty one."""
    structure_only = _STRUCTURE_ONLY.set(True)
    try:
        return call()
    except Exception:  # input_fn's own arithmetic failed on no rows: a real element decides
        del iterated[:]
    finally:
        _STRUCTURE_ONLY.reset(structure_only)
    return call()


def dataset_of(call, what="input_fn"):
    """The Dataset that `call()` (an input_fn's call) stands for: what it returns, when a Dataset; else
    the dataset its iterator reads (or one endless element), mapped by `call` (see the module)."""
    iterated = []
    token = _DATASETS_ITERATED.set(iterated)
    try:
        with graph_input.estimator_calls():
            result = _first_look(call, iterated)
    except (RuntimeError, ValueError) as error:
        if not graph_input.needs_graph(error):
            raise
        with graph_input.estimator_calls():
            return graph_input.dataset_in_graph(call, what)
    finally:
        _DATASETS_ITERATED.reset(token)
    if isinstance(result, tf.data.Dataset):
        return result
    leaves = tf.nest.flatten(result)
    odd = [type(leaf).__name__ for leaf in leaves if not _is_tensor_like(leaf)]
    if odd:
        raise TypeError(f"{what} must return a tf.data.Dataset, or features and labels as tensors; it returned "
                        f"a {type(result).__name__} holding {', '.join(sorted(set(odd)))}")
    if len(iterated) > 1:
        raise ValueError(f"{what} returned tensors from iterators over {len(iterated)} datasets; the Estimator "
                         "can read one: zip them into one dataset, or return the dataset")
    source = iterated[0] if iterated else tf.data.Dataset.from_tensors(0).repeat()
    unpacks = isinstance(source.element_spec, tuple)

    @tf.autograph.experimental.do_not_convert  # (tf.estimator ran input_fn in a graph, untransformed)
    def per_element(*element):
        token = _MAPPED_ELEMENT.set(_NOT_MAPPING if not iterated else element if unpacks else element[0])
        try:
            result = call()
        finally:
            _MAPPED_ELEMENT.reset(token)
        return graph_input.as_tuples(result)  # [features, labels] and per-tower lists, as tf.estimator read them

    return source.map(per_element)


def dataset_source(input_fn):
    """The engine's DatasetSource for input_fn, whatever of tf.estimator's forms it returns (see dataset_of)."""
    return inputs.DatasetSource.of_input_fn(input_fn, dataset_of)


def match_filenames_once(pattern, name=None):
    """tf.compat.v1.train.match_filenames_once as a queue input reads it: the files matching `pattern` (TF 2's
    version is a resource variable, which TF1's string_input_producer refuses to take in a graph)."""
    return tf.io.matching_files(pattern, name=name)
