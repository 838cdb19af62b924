"""Records a kind's TF 2.15 fixture: `<kind>/model` (the model dir after 6 steps: its checkpoint only) and
`<kind>/reference.json` (TF 2.15's evaluate, predict, export signatures, resume to step 9, TensorBoard tags,
checkpoint names), by running `<kind>/program.py` (a TF 2.15 program) through driver.py with TensorFlow
2.15.1 + tensorflow-estimator 2.15.0:

    python record.py KIND --tf215=/path/to/tf215/bin/python
    python record.py KIND --tf215=... --rollback=DIR   # TF 2.15 on a model dir this project resumed to step 9
    python record.py KIND --tf215=... --whole_dir      # keep all TF left: graph.pbtxt, events, the .meta

The third form is for the TF1-era kinds (tf1_*: programs run as TF1 ran, v2 behaviour disabled), whose dirs
come with what TF1 wrote beside the checkpoint.

The second form records, as reference.json's "rollback", what TF 2.15 evaluates and trains on a model dir
that the project wrote (tests.state.test_tf215_model_dirs makes one the same way: resume to step 9).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="0", TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0")


def run(python, kind, *args):
    """program.py's RESULT line, as JSON."""
    done = subprocess.run([python, os.path.join(HERE, "driver.py"), kind, *args], env=ENV, capture_output=True,
                          text=True, check=True)
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def tags(python, folder):
    code = ("import glob, json, sys, tensorflow as tf\nout = {}\n"
            "for path in glob.glob(sys.argv[1] + '/events.out.tfevents.*'):\n"
            "    for event in tf.compat.v1.train.summary_iterator(path):\n"
            "        for value in event.summary.value:\n"
            "            kind = value.WhichOneof('value')\n"
            "            out[value.tag] = {'simple_value': 'scalar', 'histo': 'histogram'}.get(kind, kind)\n"
            "print(json.dumps(out))")
    done = subprocess.run([python, "-c", code, folder], env=ENV, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def checkpoint_variables(python, folder):
    code = ("import json, sys, tensorflow as tf\n"
            "print(json.dumps({name: shape for name, shape in tf.train.list_variables(sys.argv[1])}))")
    done = subprocess.run([python, "-c", code, folder], env=ENV, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def record(kind, python, whole_dir=False):
    work = tempfile.mkdtemp()
    model, resumed = os.path.join(work, "model"), os.path.join(work, "resumed")
    reference = {"kind": kind, "train6": run(python, kind, model, "train", "6")}
    shutil.copytree(model, resumed)
    reference["evaluate"] = run(python, kind, model, "evaluate")
    reference["predict"] = run(python, kind, model, "predict")
    reference["export"] = run(python, kind, model, "export", os.path.join(work, "export"))
    reference["resume_train9"] = run(python, kind, resumed, "train", "9")
    reference["tags"] = {"model_step6": tags(python, resumed), "model_step6/eval": tags(python, model + "/eval")}
    reference["checkpoint_variables"] = checkpoint_variables(python, os.path.join(model, "model.ckpt-6"))
    fixture = os.path.join(HERE, kind, "model")
    shutil.rmtree(fixture, ignore_errors=True)
    os.makedirs(fixture)
    kept = ["model.ckpt-6.*"] + (["model.ckpt-6.meta", "graph.pbtxt", "events.out.tfevents.*"] if whole_dir else [])
    for path in sorted({p for pattern in kept for p in glob.glob(os.path.join(model, pattern))}):
        if whole_dir or not path.endswith(".meta"):
            shutil.copy(path, fixture)
    if os.path.isdir(os.path.join(model, "keras")):  # model_to_estimator's warm-start copy
        shutil.copytree(os.path.join(model, "keras"), os.path.join(fixture, "keras"))
    with open(os.path.join(fixture, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-6"\nall_model_checkpoint_paths: "model.ckpt-6"\n')
    return reference


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind")
    parser.add_argument("--tf215", required=True, help="a Python with tensorflow-cpu==2.15.1")
    parser.add_argument("--whole_dir", action="store_true", help="keep graph.pbtxt, events and the .meta too")
    parser.add_argument("--rollback", help="a model dir the project resumed from the fixture to step 9")
    args = parser.parse_args()
    path = os.path.join(HERE, args.kind, "reference.json")
    if args.rollback:
        with open(path) as f:
            reference = json.load(f)
        reference["rollback"] = {"evaluate": run(args.tf215, args.kind, args.rollback, "evaluate"),
                                 "train11": run(args.tf215, args.kind, args.rollback, "train", "11")}
    else:
        reference = record(args.kind, args.tf215, args.whole_dir)
    with open(path, "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
