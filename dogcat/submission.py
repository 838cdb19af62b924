"""Kaggle's submission.csv: one `id,label` row per test image, label = P(dog)."""

import numpy as np

from common.state import atomic


def write(path, ids, probabilities, clip=0.005):
    """Rows sorted by numeric id, labels clipped to [clip, 1 - clip] (log loss
    punishes confident mistakes without bound); written atomically."""
    order = np.argsort(ids, kind="stable")
    rows = ["id,label"] + [f"{ids[i]},{float(np.clip(probabilities[i], clip, 1 - clip)):.6f}" for i in order]
    atomic.write_text(path, "\n".join(rows) + "\n")
