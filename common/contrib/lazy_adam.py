"""tf.contrib.opt.LazyAdamOptimizer: TF1's Adam whose sparse update touches only the rows a batch looked up.

TF1's Adam decays every row's moments at every step, even for a sparse
gradient (an embedding's); LazyAdam, which the official Transformer trained
with, updates the moments and the variable of the rows in the gradient only,
as contrib's did (duplicate rows summed first, as every TF1 optimizer did).
A dense gradient is Adam's.
"""

import tensorflow as tf

from common.tf1.train import AdamOptimizer


class LazyAdamOptimizer(AdamOptimizer):
    """contrib's LazyAdamOptimizer (its arguments and slots are Adam's)."""

    def _resource_apply_sparse(self, grad, var, indices):
        beta1_power, beta2_power = self._powers(var)
        beta1, beta2 = self._scalar(self._beta1, var), self._scalar(self._beta2, var)
        rate = self._lr(var) * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_rows = beta1 * tf.gather(m, indices) + (1 - beta1) * grad
        v_rows = beta2 * tf.gather(v, indices) + (1 - beta2) * tf.square(grad)
        m_t = m.scatter_update(tf.IndexedSlices(m_rows, indices))
        v_t = v.scatter_update(tf.IndexedSlices(v_rows, indices))
        with tf.control_dependencies([m_t, v_t]):
            return var.scatter_sub(tf.IndexedSlices(
                rate * m_rows / (tf.sqrt(v_rows) + self._scalar(self._epsilon, var)), indices))
