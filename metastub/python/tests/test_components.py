"""The matrix worker and the simulator called from Python give the answers they give Java, bit for
bit (PythonPackageTest hands the Java answers to the suite), over each protocol and by the policy."""

import numpy
import pytest

from conftest import bits, from_bits


def block(spec, as_numpy=False):
    values = from_bits(spec["values"])
    return {"rows": spec["rows"], "cols": spec["cols"], "values": numpy.array(values) if as_numpy else values}


@pytest.mark.parametrize("protocol", ["grpc", "soap", None])
def test_matrix_worker_multiplies_as_for_java(board, java_results, protocol):
    worker = board.lookup("MatrixWorker")
    c = worker.multiplyBlock(a=block(java_results["a"]), b=block(java_results["b"]), protocol=protocol)
    java = java_results["multiplyBlock " + (protocol or "grpc")]
    assert (c.rows, c.cols) == (java["rows"], java["cols"])
    assert bits(c.values) == java["values"]
    assert java_results["multiplyBlock grpc"]["values"] == java_results["multiplyBlock soap"]["values"]


def test_matrix_blocks_as_numpy_arrays(board, java_results):
    worker = board.lookup("MatrixWorker")
    c = worker.multiplyBlock(a=block(java_results["a"], True), b=block(java_results["b"], True))
    assert isinstance(c.values, numpy.ndarray)
    assert bits(c.values) == java_results["multiplyBlock grpc"]["values"]


@pytest.mark.parametrize("protocol", ["grpc", "soap"])
def test_simulator_gives_the_time_course_java_gets(board, java_results, protocol):
    simulator = board.lookup("Simulator")
    course = simulator.simulate(parameters=from_bits(java_results["parameters"]),
                                initial=from_bits(java_results["initial"]),
                                times=numpy.array(from_bits(java_results["times"])), protocol=protocol)
    assert isinstance(course, numpy.ndarray)
    assert bits(course) == java_results["simulate " + protocol]


def test_simulator_declared_fault(board):
    simulator = board.lookup("Simulator")
    with pytest.raises(simulator.simulateFault) as fault:
        simulator.simulate(parameters=[1.0], initial=[1.0], times=[0.0, 1.0])
    assert fault.value.reason
