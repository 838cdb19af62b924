"""What a SavedModel serves, read from its saved_model.pb: the same on TensorFlow 2.15 (where
tests/data/tf215_exports/record.py runs) and here, so the two can be compared."""

import os

from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.framework import dtypes


def _shape(shape):
    return None if shape.unknown_rank else [dim.size for dim in shape.dim]


def _tensor(info):
    dtype = dtypes.as_dtype(info.dtype).name if info.dtype else None  # (an op, not a tensor: an init op's)
    return {"name": info.name, "dtype": dtype, "shape": _shape(info.tensor_shape)}


def describe(export_dir):
    """[{"tags": [...], "signatures": {key: {"method_name", "inputs", "outputs"}}}] of each MetaGraph; inputs and
    outputs: {key: {"name", "dtype", "shape"}} (shape None for an unknown rank, -1 for an unknown dimension)."""
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else str(export_dir)
    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as proto:
        saved_model.ParseFromString(proto.read())
    described = []
    for meta_graph in saved_model.meta_graphs:
        signatures = {key: {"method_name": signature.method_name,
                            "inputs": {name: _tensor(signature.inputs[name]) for name in sorted(signature.inputs)},
                            "outputs": {name: _tensor(signature.outputs[name]) for name in sorted(signature.outputs)}}
                      for key, signature in sorted(meta_graph.signature_def.items())}
        described.append({"tags": list(meta_graph.meta_info_def.tags), "signatures": signatures})
    return described
