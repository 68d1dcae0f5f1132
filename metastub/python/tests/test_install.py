"""``pip install ./metastub/python[numpy]`` into a fresh virtual environment (dependencies from
PyPI), as scripts/python-package-env.sh does it before the tests (scripts/test-prerequisites.sh; a
test installs nothing): there, the example that knows only the registry calls the Java echo over
gRPC and SOAP bit for bit and echoes a numpy array of 200,000 doubles."""

import os
import subprocess

from conftest import setting

PACKAGE = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def test_the_installed_package_calls_knowing_only_the_registry(workdir, registry_url):
    python = setting("SWITCHBOARD_TEST_PACKAGE_PYTHON")
    venv = os.path.dirname(os.path.dirname(python))
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    where = subprocess.run([python, "-c", "import switchboard; print(switchboard.__file__)"], capture_output=True,
                           text=True, timeout=60, env=clean, cwd=workdir)
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(os.path.join(venv, "lib")), "installed in the venv, not read from the checkout: " \
        + where.stdout
    run = subprocess.run([python, os.path.join(PACKAGE, "examples", "echo_from_registry.py"), registry_url, "Echo"],
                         capture_output=True, text=True, timeout=300, env=clean, cwd=workdir)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 8 and all(" exact (pinned on call)" in line for line in lines), run.stdout
