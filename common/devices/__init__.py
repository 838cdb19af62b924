"""Where things run: devices, hosts and number formats.

`plan` (the towers' devices, where variables live, what XLA compiles),
`placement` (each variable's device), `precision` (mixed precision and loss
scaling), `strategies` (tf.distribute strategies read as towers), `cluster`
(the hosts of TF_CONFIG; one host is a cluster of one), `runtime` (what
must be set before TensorFlow starts: logical devices, threads).
"""
