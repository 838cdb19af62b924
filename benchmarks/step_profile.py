"""Where a cifar10.main training step spends its time: a profile of a few steps, by op type.

    python benchmarks/step_profile.py [--num_layers=44] [--first_step=21] [--last_step=25] [--main_flags=...]

Runs `python -m cifar10.main --synthetic_data --profile_steps=FIRST,LAST`
(its default kernels, oneDNN on CPU), reads the profiler's trace of those
steps and sums each kernel's self time (its span minus the spans nested in
it on the same thread) by op type; time on executor threads outside any
kernel counts as "(framework)". Prints the top op types and the share of
convolutions (forward and both backward passes), which bounds what the
framework around them can gain.
"""

import collections
import glob
import os
import sys

import harness
from absl import app, flags
from tensorflow.tsl.profiler.protobuf import xplane_pb2

FLAGS = flags.FLAGS
harness.define_cifar10_main_flags()
flags.DEFINE_integer("first_step", 21, "First traced global step (after tracing and warm-up).")
flags.DEFINE_integer("last_step", 25, "Last traced global step.")
flags.DEFINE_integer("top", 10, "Op types to print.")

FRAMEWORK = "(framework)"


def self_times(line, metadata):
    """{op type: picoseconds} of one thread's events, each counted without the events nested in it."""
    times = collections.Counter()
    stack = []  # (end, op type) of the enclosing events
    for event in sorted(line.events, key=lambda e: (e.offset_ps, -e.duration_ps)):
        while stack and stack[-1][0] <= event.offset_ps:
            stack.pop()
        kind = metadata[event.metadata_id].display_name or FRAMEWORK
        if stack:
            times[stack[-1][1]] -= event.duration_ps
        times[kind] += event.duration_ps
        stack.append((event.offset_ps + event.duration_ps, kind))
    return times


def op_type_times(trace_path):
    space = xplane_pb2.XSpace()
    with open(trace_path, "rb") as trace:
        space.ParseFromString(trace.read())
    totals = collections.Counter()
    for plane in space.planes:
        if plane.name != "/host:CPU":
            continue
        for line in plane.lines:
            if line.name.startswith(("tf_Compute", "tf_inter_op", "tf_intra_op")):
                totals.update(self_times(line, plane.event_metadata))
    return totals


def main(argv):
    del argv
    job_dir, err, _ = harness.run_cifar10_main(FLAGS.last_step, f"--profile_steps={FLAGS.first_step},{FLAGS.last_step}")
    traces = glob.glob(os.path.join(job_dir, "plugins", "profile", "*", "*.xplane.pb"))
    if not traces:
        sys.exit(f"cifar10.main wrote no trace under {job_dir}:\n{err[-3000:]}")
    totals = op_type_times(traces[0])
    whole = sum(totals.values())
    steps = FLAGS.last_step - FLAGS.first_step + 1
    name = " ".join([f"ResNet-{FLAGS.num_layers} batch {FLAGS.batch_size}", *FLAGS.main_flags])
    top = ", ".join(f"{kind} {100 * t / whole:.1f}%" for kind, t in totals.most_common(FLAGS.top))
    convolutions = sum(t for kind, t in totals.items() if "Conv2D" in kind)  # oneDNN's or TensorFlow's own
    print(f"step_profile {name}, steps {FLAGS.first_step}-{FLAGS.last_step}: {whole / 1e12 / steps:.2f} "
          f"thread-seconds per step; {top}", flush=True)
    print(f"step_profile {name}: convolutions {100 * convolutions / whole:.1f}% of thread time, "
          f"{FRAMEWORK} {100 * totals[FRAMEWORK] / whole:.1f}%", flush=True)


if __name__ == "__main__":
    app.run(main)
