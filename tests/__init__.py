"""The test suite: one folder per package (tests/<package>/test_<module>.py), shared fixtures here."""

import os
import socket

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)  # the project root: where `python -m mnist.main` and the test jobs run
DATA = os.path.join(TESTS, "data")  # files the tests read: references recorded on TF 2.15, test images


def free_ports(count):
    """`count` ports on 127.0.0.1 free now, for the tasks of a local cluster."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports
