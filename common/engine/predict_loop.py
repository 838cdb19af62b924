"""The outer prediction loop: one compiled call per batch, the keys asked
for, one example at a time, and hooks that may stop it early."""


def _select(batch, predict_keys):
    unknown = sorted(set(predict_keys) - set(batch))
    if unknown:
        raise ValueError(f"predict_keys {unknown} are not among the predictions {sorted(batch)}")
    return {k: batch[k] for k in predict_keys}


def run(run_batch, dataset, hooks, context, predict_keys=None, predictions_dict=True, yield_single_examples=True):
    """Yields predictions: one dict (or array, when model_fn's predictions were
    one tensor and no keys are asked for) per example, or per batch.

    run_batch(features) -> {name: tensor}; predict_keys: a name or a list of
    names. Hooks see each batch's end as a step.
    """
    if isinstance(predict_keys, str):
        predict_keys = [predict_keys]
    for hook in hooks:
        hook.begin(context)
    batches = 0
    for features in dataset:
        for hook in hooks:
            hook.before_step(batches)
        batch = run_batch(features)
        if predict_keys is not None:
            batch = _select(batch, predict_keys)
        batch = {k: v.numpy() for k, v in batch.items()}
        if not predictions_dict and predict_keys is None:
            batch = batch["predictions"]
        if not yield_single_examples:
            yield batch
        elif isinstance(batch, dict):
            for index in range(len(next(iter(batch.values())))):
                yield {k: v[index] for k, v in batch.items()}
        else:
            yield from batch
        batches += 1
        for hook in hooks:
            hook.after_step(batches, {}, context)
        if context.stop_requested:
            break
    for hook in hooks:
        hook.end(batches, context)
