"""Names checked against the installed TensorFlow."""

from common.upgrade import tf_names


def test_exists_resolves_modules_and_stops_at_the_first_other_object():
    assert tf_names.exists("tf.compat.v1.get_variable")
    assert tf_names.exists("tf.compat.v1.flags.FLAGS.any_flag_name")  # FLAGS is not a module: the program's
    assert not tf_names.exists("tf.get_variable")
    assert not tf_names.exists("tf.contrib.layers")
    assert not tf_names.exists("np.zeros")
    # tensorflow.python is no attribute of TF 2's API, but TF1 programs import from it and it is there
    assert tf_names.exists("tf.python.client.device_lib.list_local_devices")
    assert not tf_names.exists("tf.python.client.no_such_module")


def test_compat_v1_name_moves_only_what_tf_lacks_at_the_top_and_compat_v1_has():
    assert tf_names.compat_v1_name("tf.get_variable") == "tf.compat.v1.get_variable"
    assert tf_names.compat_v1_name("tf.logging.info") == "tf.compat.v1.logging.info"
    assert tf_names.compat_v1_name("tf.data.Dataset") is None  # TF 2 has it
    assert tf_names.compat_v1_name("tf.contrib.layers") is None  # nowhere
    assert tf_names.compat_v1_name("tf.compat.v1.get_variable") is None
