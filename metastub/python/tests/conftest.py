"""What the suite runs against, given by the environment. ``mvn verify`` runs it from
``PythonPackageTest`` (cli module), which serves a registry, the Java echo component, the matrix
worker and the simulator in one JVM and sets:

- SWITCHBOARD_TEST_REGISTRY: the registry's URL; SWITCHBOARD_TEST_SECRET: its shared secret (that of
  every registry here);
- SWITCHBOARD_TEST_NO_STREAM_REGISTRY: a registry without a watch stream (watches long-poll);
- SWITCHBOARD_TEST_ONE_STREAM_REGISTRY: a registry that holds at most one watch stream per client host;
- SWITCHBOARD_TEST_NAMES_ONLY_REGISTRY: a registry whose policy lets anyone bind, look up and watch
  the names under ``PyOnly.`` and nothing else (no watch of every name);
- SWITCHBOARD_TEST_SCHEMAS: a directory with echo.xsd and what the interface compiler derives from it
  (Echo.proto, Echo.wsdl), and the registry's own Registry.proto;
- SWITCHBOARD_TEST_JAVA_RESULTS: the matrix worker's and simulator's answers to Java, as JSON;
- SWITCHBOARD_TEST_WORKDIR: a scratch directory.

A test whose setting is missing fails: it is never skipped."""

import json
import os
import struct
import time

import pytest

import switchboard


def setting(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail("%s is not set: run the suite through mvn verify (PythonPackageTest) or set it by hand" % name)
    return value


@pytest.fixture(scope="session")
def registry_url():
    return setting("SWITCHBOARD_TEST_REGISTRY")


@pytest.fixture(scope="session")
def secret():
    return setting("SWITCHBOARD_TEST_SECRET")


@pytest.fixture(scope="session")
def schemas():
    return setting("SWITCHBOARD_TEST_SCHEMAS")


@pytest.fixture(scope="session")
def tls_files():
    """The test CA's PKCS#12 files, as the Java flags take them: a client's and a server's key, the trust store."""
    d = setting("SWITCHBOARD_TEST_TLS")
    return {name: os.path.join(d, name) for name in ("client.p12", "server.p12", "trust.p12", "password")}


@pytest.fixture(scope="session")
def echo_proto(schemas):
    with open(os.path.join(schemas, "Echo.proto"), encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="session")
def workdir():
    return setting("SWITCHBOARD_TEST_WORKDIR")


@pytest.fixture(scope="session")
def java_results():
    with open(setting("SWITCHBOARD_TEST_JAVA_RESULTS"), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="session")
def board(registry_url):
    with switchboard.connect(registry_url) as b:
        yield b


@pytest.fixture(scope="session")
def echo(board):
    return board.lookup("Echo")


def bits(values):
    """Doubles as their bit patterns (so -0.0 differs from 0.0 and NaN payloads count)."""
    return [struct.pack(">d", v).hex() for v in values]


def from_bits(hexes):
    return [struct.unpack(">d", bytes.fromhex(h))[0] for h in hexes]


def until(condition, what, seconds=30):
    """Waits for ``condition`` (polled every 20 ms), failing with ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)
