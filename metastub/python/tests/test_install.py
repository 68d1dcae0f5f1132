"""``pip install ./metastub/python`` into a fresh virtual environment (dependencies from PyPI), then
the example that knows only the registry calls the Java echo over gRPC and SOAP bit for bit and
echoes a numpy array of 200,000 doubles."""

import os
import shutil
import subprocess
import sys
import venv

PACKAGE = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def test_pip_install_into_a_fresh_venv_and_call_knowing_only_the_registry(workdir, registry_url):
    env_dir = os.path.join(workdir, "fresh-venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = os.path.join(env_dir, "bin", "python")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    # a copy of the package, so that the build's leftovers (build/, *.egg-info) stay out of the checkout
    source = os.path.join(workdir, "switchboard-source")
    shutil.rmtree(source, ignore_errors=True)
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    install = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q",
                              "--no-compile", source + "[numpy]"], capture_output=True, text=True, timeout=600, env=clean)
    assert install.returncode == 0, install.stdout + install.stderr
    where = subprocess.run([python, "-c", "import switchboard; print(switchboard.__file__)"], capture_output=True,
                           text=True, timeout=60, env=clean, cwd=workdir)
    assert where.returncode == 0 and where.stdout.startswith(env_dir), where.stdout + where.stderr
    run = subprocess.run([python, os.path.join(PACKAGE, "examples", "echo_from_registry.py"), registry_url, "Echo"],
                         capture_output=True, text=True, timeout=300, env=clean, cwd=workdir)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 8 and all(" exact (pinned on call)" in line for line in lines), run.stdout
    assert sys.executable != python
