"""Reference batches of TF1 queue-runner input pipelines on TF 2.15.

Run with /work/scratch/tf215/venv/bin/python; writes queues.json next to this file
(and the two TFRecord files under ./queue_data/, whose bytes are also in the JSON).

Each case is built in a fresh tf.compat.v1.Graph and run in a Session with
local/global variable initializers, a Coordinator and start_queue_runners, pulling
batches until OutOfRangeError, as a TF1 program did.
"""
import base64
import json
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "queue_data")
FILE_IDS = {"file_a": list(range(0, 7)), "file_b": list(range(100, 105))}
FEATURES = {"id": v1.FixedLenFeature([], tf.int64), "x": v1.FixedLenFeature([], tf.float32)}


def example_bytes(i):
    return tf.train.Example(features=tf.train.Features(feature={
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5])),
    })).SerializeToString()


def write_files():
    os.makedirs(DATA, exist_ok=True)
    info = {}
    for name, ids in FILE_IDS.items():
        path = os.path.join(DATA, name + ".tfrecord")
        records = [example_bytes(i) for i in ids]
        with tf.io.TFRecordWriter(path) as writer:
            for r in records:
                writer.write(r)
        with open(path, "rb") as f:
            whole = f.read()
        info[name] = {
            "path_relative_to_json": os.path.relpath(path, HERE),
            "ids": ids,
            "x": [i * 0.5 for i in ids],
            "records_base64": [base64.b64encode(r).decode() for r in records],
            "file_base64": base64.b64encode(whole).decode(),
            "compression": "none",
        }
    return info


def tensor_info(t):
    return {"name": t.name, "dtype": t.dtype.name,
            "static_shape": None if t.shape.rank is None else t.shape.as_list()}


def run_pipeline(build, max_batches=100):
    """Builds in a fresh graph, runs until OutOfRangeError; returns dict."""
    with tf.Graph().as_default():
        tensors = build()
        single = not isinstance(tensors, (list, tuple))
        if single:  # tf.train.batch([t]) returns t itself, not [t] (TF1's _as_original_type)
            tensors = [tensors]
        local_names = [v.op.name for v in v1.local_variables()]
        qr_names = [qr.name for qr in v1.get_collection(v1.GraphKeys.QUEUE_RUNNERS)]
        with v1.Session() as sess:
            sess.run([v1.global_variables_initializer(), v1.local_variables_initializer()])
            coord = v1.train.Coordinator()
            threads = v1.train.start_queue_runners(sess=sess, coord=coord)
            batches, end = [], None
            try:
                while len(batches) < max_batches and not coord.should_stop():
                    batches.append([np.asarray(v).tolist() for v in sess.run(tensors)])
            except tf.errors.OutOfRangeError as e:
                end = type(e).__name__
            finally:
                coord.request_stop()
            join_error = None
            try:
                coord.join(threads)
            except Exception as e:  # recorded, not expected
                join_error = repr(e)
    return {
        "batches": batches,
        "batch_sizes": [len(b[0]) for b in batches],
        "batch_returned_single_tensor_not_list": single,
        "ended_with": end,
        "join_error": join_error,
        "output_tensors": [tensor_info(t) for t in tensors],
        "local_variables": local_names,
        "queue_runners": qr_names,
    }


def tfrecord_case(files, num_epochs, batch_size, allow_smaller):
    def build():
        fq = v1.train.string_input_producer(files, num_epochs=num_epochs, shuffle=False)
        _, serialized = v1.TFRecordReader().read(fq)
        parsed = v1.parse_single_example(serialized, FEATURES)
        return v1.train.batch([parsed["id"], parsed["x"]], batch_size=batch_size,
                              allow_smaller_final_batch=allow_smaller)
    return build


def main():
    files_info = write_files()
    files = [os.path.join(DATA, "file_a.tfrecord"), os.path.join(DATA, "file_b.tfrecord")]
    cases = {}

    def add(name, description, build, columns):
        result = run_pipeline(build)
        cases[name] = {"description": description, "columns": columns, **result}
        print(name, result["batch_sizes"], result["ended_with"], result["join_error"])

    for bs in (4, 5):
        for allow in (False, True):
            add(f"tfrecord_epochs2_batch{bs}_allow_smaller_{allow}",
                f"string_input_producer([file_a, file_b], num_epochs=2, shuffle=False) + "
                f"TFRecordReader().read + parse_single_example({{id: int64, x: float32}}) + "
                f"tf.train.batch([id, x], batch_size={bs}, allow_smaller_final_batch={allow})",
                tfrecord_case(files, 2, bs, allow), ["id", "x"])
    add("tfrecord_epochs1_batch4_allow_smaller_True",
        "as above with num_epochs=1, tf.train.batch(batch_size=4, allow_smaller_final_batch=True)",
        tfrecord_case(files, 1, 4, True), ["id", "x"])

    def slice_build():
        a, b = v1.train.slice_input_producer(
            [np.arange(10), np.arange(10) * 2.0], num_epochs=1, shuffle=False)
        return v1.train.batch([a, b], batch_size=3, allow_smaller_final_batch=True)
    add("slice_input_producer_batch3",
        "slice_input_producer([np.arange(10) (int64), np.arange(10)*2.0 (float64)], num_epochs=1, "
        "shuffle=False) + tf.train.batch(batch_size=3, allow_smaller_final_batch=True)",
        slice_build, ["a", "b"])

    def range_build():
        q = v1.train.range_input_producer(5, num_epochs=2, shuffle=False)
        return v1.train.batch([q.dequeue()], batch_size=4, allow_smaller_final_batch=True)
    add("range_input_producer_batch4",
        "range_input_producer(5, num_epochs=2, shuffle=False).dequeue() + "
        "tf.train.batch([i], batch_size=4, allow_smaller_final_batch=True)",
        range_build, ["i"])

    def input_build():
        q = v1.train.input_producer(tf.constant([10, 20, 30, 40, 50]), num_epochs=2, shuffle=False)
        return v1.train.batch([q.dequeue()], batch_size=4, allow_smaller_final_batch=True)
    add("input_producer_batch4",
        "input_producer(tf.constant([10,20,30,40,50]) (int32), num_epochs=2, shuffle=False)"
        ".dequeue() + tf.train.batch([v], batch_size=4, allow_smaller_final_batch=True)",
        input_build, ["v"])

    for bs, allow in ((4, False), (5, False), (5, True)):
        def shuffle_build(bs=bs, allow=allow):
            fq = v1.train.string_input_producer(files, num_epochs=1, shuffle=False)
            _, serialized = v1.TFRecordReader().read(fq)
            parsed = v1.parse_single_example(serialized, FEATURES)
            return v1.train.shuffle_batch([parsed["id"], parsed["x"]], batch_size=bs,
                                          capacity=20, min_after_dequeue=5, seed=7,
                                          allow_smaller_final_batch=allow)
        name = f"shuffle_batch_epochs1_batch{bs}_allow_smaller_{allow}"
        result = run_pipeline(shuffle_build)
        ids = sorted(i for b in result["batches"] for i in b[0])
        cases[name] = {
            "description": (
                f"string_input_producer([file_a, file_b], num_epochs=1, shuffle=False) + TFRecordReader"
                f" + parse_single_example + tf.train.shuffle_batch([id, x], batch_size={bs}, capacity=20,"
                f" min_after_dequeue=5, seed=7, allow_smaller_final_batch={allow}). Order is not "
                f"defined: only sizes and the multiset of ids are recorded"
                + ("; with allow_smaller_final_batch=False the left-over records are dropped, "
                   "and which ones depends on the shuffle, so ids_seen is informational"
                   if not allow and 12 % bs else "")),
            "batch_sizes": result["batch_sizes"],
            "ids_seen_sorted": ids,
            "ids_multiset_is_deterministic": bool(allow or 12 % bs == 0),
            "ended_with": result["ended_with"],
            "join_error": result["join_error"],
            "output_tensors": result["output_tensors"],
            "local_variables": result["local_variables"],
            "queue_runners": result["queue_runners"],
        }
        print(name, result["batch_sizes"], ids)

    out = {
        "tensorflow_version": tf.__version__,
        "numpy_version": np.__version__,
        "notes": (
            "Graph mode; Session; global+local variable initializers; Coordinator + "
            "start_queue_runners; sess.run(batch) until OutOfRangeError. 'batches' is a list of "
            "[column0 list, column1 list, ...] per sess.run, columns named in 'columns'. "
            "tf.train.batch uses its default num_threads=1, so order is deterministic. "
            "Files: write records_base64 with a TFRecordWriter (or file_base64 verbatim) to "
            "file_a.tfrecord and file_b.tfrecord; the producer lists [file_a, file_b] in that order."),
        "files": files_info,
        "cases": cases,
    }
    path = os.path.join(HERE, "queues.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
