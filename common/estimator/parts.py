"""What an Estimator is assembled from, shared by its train, evaluate, predict and export calls."""

import dataclasses

from common.adapters import session_run_hooks


@dataclasses.dataclass
class EstimatorParts:
    """config: the RunConfig (model_dir set); model: the engine's ModelBuilder;
    state: its ModelState; step: the TowerStep; loops: the LoopCache; export_tag_sets: the tag sets an export's
    MetaGraph is written under (TPUEstimator's export_to_tpu adds ("serve", "tpu"))."""

    config: object
    params: dict
    model: object
    state: object
    step: object
    loops: object
    export_tag_sets: tuple = (("serve",),)

    @property
    def cluster(self):
        return self.config.cluster

    def run_in_scope(self, loop, *args):
        """loop(*args) in the model's scope (a loop may trace model_fn), a lost host reported as such."""
        with self.model.scope(), self.cluster.reporting_lost_workers():
            return loop(*args)


def user_hooks(hooks, info):
    """The caller's hooks and the spec's (info: the mode's ProbeInfo), TF1
    SessionRunHooks wrapped to run here."""
    return session_run_hooks.adapt_hooks(list(hooks or ()) + list(info.hooks))
